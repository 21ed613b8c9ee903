//! Capturing the client's log events for one scenario run.
//!
//! Each run has its own single-threaded runtime, so a thread-local subscriber sees every
//! event of the client's tasks. The buffer is bounded: a stderr flood logs one DEBUG event
//! per line and must not grow memory without end.

use serde::Serialize;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

/// How many events are kept per run; past that, events are only counted.
const MAX_EVENTS: usize = 2_000;

/// One log event.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LogEvent {
    /// `WARN`, `DEBUG`, …
    pub level: String,
    /// The target, e.g. `mcp_refclient::stderr`.
    pub target: String,
    /// The message and its fields (`message key=value …`).
    pub message: String,
}

/// The events captured so far.
#[derive(Clone, Debug, Default)]
pub struct LogBuffer {
    inner: Arc<Mutex<Captured>>,
}

#[derive(Debug, Default)]
struct Captured {
    events: Vec<LogEvent>,
    dropped: usize,
}

impl LogBuffer {
    /// Installs a capturing subscriber on this thread until the guard is dropped.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        let layer = CaptureLayer {
            buffer: self.clone(),
        };
        tracing::subscriber::set_default(tracing_subscriber::registry().with(layer))
    }

    /// The events kept, in order, and how many were dropped past the bound.
    pub fn take(&self) -> (Vec<LogEvent>, usize) {
        let mut captured = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (std::mem::take(&mut captured.events), captured.dropped)
    }

    fn push(&self, event: LogEvent) {
        let mut captured = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // WARN and above are always kept: they are what scenarios assert on.
        if captured.events.len() < MAX_EVENTS || event.level == "WARN" || event.level == "ERROR" {
            captured.events.push(event);
        } else {
            captured.dropped += 1;
        }
    }
}

struct CaptureLayer {
    buffer: LogBuffer,
}

impl<S: Subscriber> Layer<S> for CaptureLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut visitor = MessageVisitor::default();
        event.record(&mut visitor);
        let level = *event.metadata().level();
        self.buffer.push(LogEvent {
            level: level_name(level).into(),
            target: event.metadata().target().into(),
            message: visitor.text,
        });
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::ERROR => "ERROR",
        Level::WARN => "WARN",
        Level::INFO => "INFO",
        Level::DEBUG => "DEBUG",
        Level::TRACE => "TRACE",
    }
}

#[derive(Default)]
struct MessageVisitor {
    text: String,
}

impl Visit for MessageVisitor {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        if field.name() == "message" {
            self.text.push_str(&format!("{value:?}"));
        } else {
            self.text.push_str(&format!("{}={value:?}", field.name()));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        if field.name() == "message" {
            self.text.push_str(value);
        } else {
            self.text.push_str(&format!("{}={value}", field.name()));
        }
    }
}
