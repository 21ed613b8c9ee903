//! Judgements several check areas share: an error with a given code expected, a listing
//! that stopped short.

use crate::fixtures::Listed;
use crate::outcome::{Failure, Finding};
use crate::stdio::Exchange;

/// An error -32602 passes; anything else fails.
pub fn expect_invalid_params(exchange: &Exchange, what: &str) -> Finding {
    expect_code(exchange, what, -32602, "-32602 (Invalid params)")
}

/// An error with `code` passes; anything else fails.
pub fn expect_code(exchange: &Exchange, what: &str, code: i64, named: &str) -> Finding {
    let actual = match (exchange.error_code(), exchange.result()) {
        (Some(c), _) if c == code => return Finding::pass(),
        (Some(c), _) => format!("{what}: error {c}"),
        (None, Some(_)) => format!("{what}: a result"),
        (None, None) => format!("{what}: no response"),
    };
    Finding::Fail(
        Failure::new(format!("a JSON-RPC error {named}"), actual)
            .sent(&exchange.sent)
            .reply(&exchange),
    )
}

/// A listing that stopped short, as a failure.
pub fn broken(listed: &Listed) -> Option<Finding> {
    listed.broken.as_ref().map(|(why, exchange)| {
        let failure = Failure::new("a list whose pages end", why.clone());
        Finding::Fail(match exchange {
            Some(exchange) => failure.sent(&exchange.sent).reply(exchange),
            None => failure.sent("").received(Some("")),
        })
    })
}
