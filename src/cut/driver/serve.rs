//! The other side of the protocol: any [`ClientUnderTest`] served as a driver on this
//! process's stdin/stdout. `mcp-conformance driver --profile P` serves the reference client,
//! proof that the protocol carries what the scenarios need.
//!
//! Served drivers are `reusable`: on `reset` the steps still running are aborted, the
//! adapter's connection is dropped (a Rust client's drop ends its stdio server) and the
//! adapter itself is dropped, and the next scenario gets a new one from the factory, so no
//! state of one scenario reaches the next.

use super::protocol::{DriverStep, Hello, Reply, Request};
use crate::cut::{ClientUnderTest, StepResult};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::task::JoinHandle;

/// Serves an adapter from `make` (a new one after each `reset`) until stdin closes; returns
/// the process exit code.
pub fn serve<A: ClientUnderTest + 'static>(make: impl Fn() -> A + 'static) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start a runtime: {e}");
            return crate::exit_code::HARNESS_FAULT;
        }
    };
    let local = tokio::task::LocalSet::new();
    let code = local.block_on(&runtime, serve_lines(make));
    drop(local);
    runtime.shutdown_timeout(Duration::from_millis(200));
    code
}

type Out = Rc<tokio::sync::Mutex<tokio::io::Stdout>>;

async fn write_line(out: &Out, value: &impl serde::Serialize) {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    let mut out = out.lock().await;
    let _ = out.write_all(&line).await;
    let _ = out.flush().await;
}

async fn serve_lines<A: ClientUnderTest + 'static>(make: impl Fn() -> A) -> u8 {
    let mut adapter = Rc::new(make());
    let out: Out = Rc::new(tokio::sync::Mutex::new(tokio::io::stdout()));
    let mut hello = adapter.describe();
    // Each scenario's connection is dropped on `reset`: the process serves the next.
    hello.capabilities.push(crate::cut::Capability::Reusable);
    write_line(&out, &Hello { hello }).await;
    let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
    let mut running: HashMap<u64, JoinHandle<()>> = HashMap::new();
    while let Ok(Some(line)) = super::lines::read_line(&mut reader, super::MAX_LINE).await {
        running.retain(|_, task| !task.is_finished());
        let request: Request = match serde_json::from_slice(&line) {
            Ok(request) => request,
            Err(e) => {
                eprintln!("error: not a request ({e})");
                return crate::exit_code::USAGE;
            }
        };
        if let DriverStep::Cancel { of } = request.step {
            if let Some(task) = running.remove(&of) {
                task.abort();
            }
            write_line(&out, &reply(request.id, Ok(json!("cancelled")))).await;
            continue;
        }
        if let DriverStep::Reset = request.step {
            for (_, task) in running.drain() {
                task.abort();
            }
            let result = adapter.drop_connection().await.map(|_| json!("clean"));
            // Let the aborted steps end (and release their hold on the adapter) first.
            tokio::task::yield_now().await;
            adapter = Rc::new(make());
            write_line(&out, &reply(request.id, result)).await;
            continue;
        }
        let (adapter, out) = (adapter.clone(), out.clone());
        let task = tokio::task::spawn_local(async move {
            let result = step(&*adapter, request.step).await;
            write_line(&out, &reply(request.id, result)).await;
        });
        running.insert(request.id, task);
        // Let the step start (and send its request) before the next line is read.
        tokio::task::yield_now().await;
    }
    for (_, task) in running {
        task.abort();
    }
    let _ = adapter.drop_connection().await;
    crate::exit_code::SUCCESS
}

fn reply(id: u64, result: StepResult) -> Reply {
    match result {
        Ok(value) => Reply {
            id,
            ok: true,
            value: Some(value),
            error: None,
        },
        Err(e) => Reply {
            id,
            ok: false,
            value: None,
            error: Some(e.text),
        },
    }
}

async fn step<A: ClientUnderTest>(adapter: &A, step: DriverStep) -> StepResult {
    match step {
        DriverStep::Connect { target, settings } => adapter.connect(&target, &settings).await,
        DriverStep::ListTools => adapter.list_tools().await,
        DriverStep::CallTool {
            name,
            arguments,
            timeout_ms,
        } => {
            adapter
                .call_tool(&name, arguments, timeout_ms.map(Duration::from_millis))
                .await
        }
        DriverStep::Close => adapter.close().await,
        DriverStep::Drop => adapter.drop_connection().await,
        DriverStep::Exited => adapter.exited().await.map(|text| json!(text)),
        DriverStep::ListChangedCount => adapter.list_changed_count().await.map(|n| json!(n)),
        DriverStep::Reconnect => adapter.reconnect().await,
        DriverStep::ToolLayer { layer } => adapter.tool_layer(layer).await,
        DriverStep::Cancel { .. } => Ok(Value::Null),
        DriverStep::Reset => Ok(Value::Null),
        DriverStep::Request { method, params } => adapter.request(&method, params).await,
        DriverStep::Notify { method, params } => adapter.notify(&method, params).await,
        DriverStep::ServerInfo => adapter.server_info().await,
        DriverStep::ServerPid => adapter.server_pid().await.map(|pid| json!(pid)),
        DriverStep::SessionId => adapter.session_id().await.map(|id| json!(id)),
    }
}
