//! A scenario's scripted tokens (`[client.http] tokens`), for any client's token hook: the
//! first token, then one more per refresh; with `rotate`, every ask gets a token of its own
//! (`<token>-1`, `<token>-2`, …), so a client that reuses a token it was given earlier is
//! seen to. Each client under test wraps it in its own trait (the reference client's
//! `TokenProvider`, yoagent's `AuthorizationSource`, kova's `TokenProvider`).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::scenario::Tokens;

/// The tokens, and how far the refreshes went.
#[derive(Debug)]
pub struct ScriptedTokens {
    tokens: Vec<String>,
    current: AtomicUsize,
    /// `rotate`: how many times a token was asked for.
    asks: Option<AtomicUsize>,
}

impl ScriptedTokens {
    /// The scenario's tokens, the first one current.
    pub fn new(tokens: &Tokens) -> Self {
        let mut all = vec![tokens.token.clone()];
        all.extend(tokens.refreshed.iter().cloned());
        ScriptedTokens {
            tokens: all,
            current: AtomicUsize::new(0),
            asks: tokens.rotate.then(|| AtomicUsize::new(0)),
        }
    }

    /// The token this ask gets: the current one (numbered with `rotate`); none once the
    /// refreshes ran past the last.
    pub fn token(&self) -> Option<String> {
        let token = self
            .tokens
            .get(self.current.load(Ordering::SeqCst))
            .cloned();
        match &self.asks {
            Some(asks) => token.map(|t| format!("{t}-{}", asks.fetch_add(1, Ordering::SeqCst) + 1)),
            None => token,
        }
    }

    /// A refresh: the next token, current from now on; none past the last.
    pub fn refresh(&self) -> Option<String> {
        let next = self.current.fetch_add(1, Ordering::SeqCst) + 1;
        self.tokens.get(next).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(rotate: bool) -> Tokens {
        Tokens {
            token: "t0".into(),
            refreshed: vec!["t1".into()],
            rotate,
        }
    }

    #[test]
    fn each_refresh_moves_to_the_next_token_until_none_is_left() {
        let scripted = ScriptedTokens::new(&tokens(false));
        assert_eq!(scripted.token().as_deref(), Some("t0"));
        assert_eq!(scripted.token().as_deref(), Some("t0"));
        assert_eq!(scripted.refresh().as_deref(), Some("t1"));
        assert_eq!(scripted.token().as_deref(), Some("t1"));
        assert_eq!(scripted.refresh(), None);
        assert_eq!(scripted.token(), None);
    }

    #[test]
    fn with_rotate_every_ask_gets_a_token_of_its_own() {
        let scripted = ScriptedTokens::new(&tokens(true));
        assert_eq!(scripted.token().as_deref(), Some("t0-1"));
        assert_eq!(scripted.token().as_deref(), Some("t0-2"));
        scripted.refresh();
        assert_eq!(scripted.token().as_deref(), Some("t1-3"));
    }
}
