//! What a check needs of the sessions it runs on, and nothing of which checks run when: the
//! requests every transport answers ([`Rpc`]), what the feature checks need beyond them
//! ([`peer`]), the openers that start sessions and keep their logs ([`ctx`] over stdio,
//! [`http_ctx`] over HTTP), the 2026-07-28 session ([`modern`]) and what its own checks send
//! as they are ([`transport`]).

pub mod ctx;
pub mod http_ctx;
pub mod modern;
pub mod peer;
pub mod transport;

use crate::http::HttpSession;
use crate::outcome::{excerpt, Finding};
use crate::stdio::{Exchange, Session, Unanswered};
use serde_json::Value;
use std::future::Future;

/// A session that sends JSON-RPC requests and waits (bounded) for their answers: a stdio
/// [`Session`] or an HTTP [`crate::http::HttpSession`].
pub trait Rpc: Send {
    /// Sends a request with the session's next id and waits for the response.
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send;

    /// [`Rpc::request`], but a wait that only ran out of time goes on up to the session's
    /// patience ([`crate::patience`]): a first request of a server that may still be
    /// starting (`server/discover`).
    fn request_patient(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send;

    /// Why the session stopped answering (a wait ran out, the server left), if it did: the
    /// checks after it in the session are skipped instead of each waiting out `--timeout`.
    fn stalled(&self) -> Option<Unanswered>;
}

impl Rpc for Session {
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        Session::request(self, method, params)
    }

    fn request_patient(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        Session::request_patient(self, method, params)
    }

    fn stalled(&self) -> Option<Unanswered> {
        self.stalled.clone()
    }
}

impl Rpc for HttpSession {
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        HttpSession::request(self, method, params)
    }

    fn request_patient(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        HttpSession::request_patient(self, method, params)
    }

    fn stalled(&self) -> Option<Unanswered> {
        self.stalled.clone()
    }
}

/// The finding of a query not asked because the shared session stopped answering.
pub fn not_asked(why: &str) -> Finding {
    Finding::skip(format!(
        "not asked: the session stopped answering an earlier check ({})",
        excerpt(why)
    ))
}
