//! The plan: which checks run against one target, in which order and on which sessions. A
//! first session proves the server answers (else the target is unreachable), then the checks
//! run concurrently, each group in its own server process (stdio, [`stdio`]) or its own
//! session (HTTP, [`http`]) where one check could disturb another; the 2026-07-28 checks run
//! on one session of their own ([`stateless`]). The plan imports the check areas; nothing
//! below it imports the plan.

pub mod auth;
pub mod declaring;
pub mod features;
pub mod features_2026;
pub mod http;
pub mod launch;
pub mod order;
pub mod queries;
pub mod settings;
pub mod shared;
pub mod stateless;
pub mod stdio;

pub use order::{sort, ALL};
pub use settings::{AuthTokens, Found, Plan, Unreachable};
