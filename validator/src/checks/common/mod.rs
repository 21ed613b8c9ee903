//! What several check areas share, below all of them: judging content blocks ([`content`]),
//! the errors expected of a bad request and a listing cut short ([`expect`]), tool calls in
//! flight ([`calls`]), the names no server has ([`names`]).

pub mod calls;
pub mod content;
pub mod expect;
pub mod names;
