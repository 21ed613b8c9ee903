//! [`HttpMock`]: the scripted HTTP(S) server, run in-process on a thread and tokio runtime of
//! its own, so whatever runtime its owner drives does not matter.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio_rustls::TlsAcceptor;

use crate::error::HttpStartError;
use crate::http::player::{Origins, PlayEnd, Player, Watch};
use crate::http::server::{self, Listener, Socket, QUEUE};
use crate::http::tls;
use crate::script::{Origin, Script, Step, Transport};
use crate::wire_log::{LogWriter, Record};

/// The name of the CA file an https mock writes in its state folder.
pub const CA_FILE: &str = "mcp-mock-http-ca.pem";

/// A running scripted HTTP(S) server: listeners on `127.0.0.1` (ephemeral ports) and the
/// player of its script. Stopped by [`shutdown`](Self::shutdown) or on drop, which logs
/// `Unfinished` when steps were left.
pub struct HttpMock {
    url: String,
    second: String,
    plain: Option<String>,
    ca_pem: Option<String>,
    ca_path: Option<PathBuf>,
    watch: Arc<Watch>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for HttpMock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpMock")
            .field("url", &self.url)
            .field("second", &self.second)
            .finish_non_exhaustive()
    }
}

impl HttpMock {
    /// Starts serving `script` (transport `http`, `https` or `legacy-sse`), appending to the
    /// wire log `log` when given. Over https the CA is also written to `state_dir`
    /// ([`CA_FILE`]). Returns once the listeners are bound: requests sent from then on wait
    /// for the player.
    pub fn start(
        script: Script,
        log: Option<PathBuf>,
        state_dir: PathBuf,
    ) -> Result<HttpMock, HttpStartError> {
        if !script.transport.is_http() {
            return Err(HttpStartError::Script(
                "the script's transport is stdio: use the stdio mock".into(),
            ));
        }
        crate::load::validate(&script).map_err(HttpStartError::Script)?;
        let mut log_writer = match &log {
            Some(path) => LogWriter::open(path).map_err(|source| HttpStartError::Log {
                path: path.clone(),
                source,
            })?,
            None => LogWriter::none(),
        };
        let https = script.transport == Transport::Https;
        let identity = match https {
            true => Some(tls::generate().map_err(HttpStartError::Tls)?),
            false => None,
        };
        let ca_path = match &identity {
            Some(identity) => Some(write_ca(&state_dir, &identity.ca_pem)?),
            None => None,
        };
        let acceptor = identity
            .as_ref()
            .map(|identity| TlsAcceptor::from(identity.config.clone()));
        // A script that opens with `refuse` refuses from the start: the primary port is bound
        // but not listening before the URL is handed out.
        let primary = match script.steps.first() {
            Some(Step::Refuse(r)) => {
                let socket = server::bound(([127, 0, 0, 1], 0).into()).map_err(|source| {
                    HttpStartError::Io {
                        what: "bind 127.0.0.1".into(),
                        source,
                    }
                })?;
                Unstarted::Refusing(socket, Duration::from_millis(r.ms))
            }
            _ => Unstarted::Listening(bind()?),
        };
        let second = bind()?;
        let plain = match https {
            true => Some(bind()?),
            false => None,
        };
        let scheme = if https { "https" } else { "http" };
        let port = |l: &std::net::TcpListener| l.local_addr().map(|a| a.port()).unwrap_or(0);
        let primary_port = match &primary {
            Unstarted::Listening(l) => port(l),
            Unstarted::Refusing(s, _) => s.local_addr().map(|a| a.port()).unwrap_or(0),
        };
        let origins = Origins {
            primary: format!("{scheme}://127.0.0.1:{primary_port}"),
            second: format!("{scheme}://localhost:{}", port(&second)),
            plain: plain
                .as_ref()
                .map(|l| format!("http://127.0.0.1:{}", port(l))),
        };
        let default_path = match script.transport {
            Transport::LegacySse => "/sse",
            _ => "/mcp",
        };
        let path = script
            .http
            .path
            .clone()
            .unwrap_or_else(|| default_path.into());
        let url = format!("{}{path}", origins.primary);
        let second_url = format!("{}{path}", origins.second);
        let plain_url = origins.plain.as_ref().map(|o| format!("{o}{path}"));
        log_writer.append(&Record::Listening {
            primary: url.clone(),
            second: second_url.clone(),
            plain: plain_url.clone(),
        });

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| HttpStartError::Io {
                what: "start a tokio runtime".into(),
                source,
            })?;
        let watch = Arc::new(Watch::default());
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let player_watch = watch.clone();
        let mut sockets = vec![
            (primary, Origin::Primary, acceptor.clone()),
            (Unstarted::Listening(second), Origin::Second, acceptor),
        ];
        if let Some(plain) = plain {
            sockets.push((Unstarted::Listening(plain), Origin::Plain, None));
        }
        let thread = std::thread::Builder::new()
            .name("mcp-mock-http".into())
            .spawn(move || {
                runtime.block_on(run(
                    script,
                    log_writer,
                    sockets,
                    origins,
                    player_watch,
                    shutdown_rx,
                ));
                // Dropping the runtime drops every connection and stream still open.
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .map_err(|source| HttpStartError::Io {
                what: "start the mock's thread".into(),
                source,
            })?;
        Ok(HttpMock {
            url,
            second: second_url,
            plain: plain_url,
            ca_pem: identity.map(|i| i.ca_pem),
            ca_path,
            watch,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// The URL the client is given: `http(s)://127.0.0.1:PORT/mcp` (`/sse` over legacy-sse,
    /// or the script's `http.path`).
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The same endpoint on the second origin: `http(s)://localhost:PORT2/mcp`.
    pub fn second_origin_url(&self) -> String {
        self.second.clone()
    }

    /// https only: the endpoint on the plain-HTTP listener, `http://127.0.0.1:PORT3/mcp`.
    pub fn plain_url(&self) -> Option<String> {
        self.plain.clone()
    }

    /// https only: the CA certificate (PEM) that signed the listeners' certificate.
    pub fn ca_certificate_pem(&self) -> Option<String> {
        self.ca_pem.clone()
    }

    /// https only: where the CA certificate was written.
    pub fn ca_certificate_path(&self) -> Option<&Path> {
        self.ca_path.as_deref()
    }

    /// How the play ended, or `None` while steps are being played.
    pub fn end(&self) -> Option<PlayEnd> {
        self.watch
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .end
    }

    /// Waits up to `bound` for the play to end; `None` if it did not.
    pub fn wait_end(&self, bound: Duration) -> Option<PlayEnd> {
        let progress = self
            .watch
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (progress, _) = self
            .watch
            .changed
            .wait_timeout_while(progress, bound, |p| p.end.is_none())
            .unwrap_or_else(|e| e.into_inner());
        progress.end
    }

    /// The progress shared with the player (for the standalone binary's waits).
    pub(crate) fn watch(&self) -> &Arc<Watch> {
        &self.watch
    }

    /// Stops the listeners, drops every connection and logs `Unfinished` when steps were
    /// left. Returns once the mock's thread has ended.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HttpMock {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn run(
    script: Script,
    log: LogWriter,
    sockets: Vec<(Unstarted, Origin, Option<TlsAcceptor>)>,
    origins: Origins,
    watch: Arc<Watch>,
    mut shutdown: oneshot::Receiver<()>,
) {
    let (requests_tx, requests_rx) = mpsc::channel(QUEUE);
    let (stop_tx, stop_rx) = watch::channel(false);
    let shared = server::Shared {
        requests: requests_tx,
        seq: Arc::new(AtomicU64::new(0)),
        stop: stop_rx,
    };
    let (refusals_tx, refusals_rx) = mpsc::unbounded_channel();
    let mut refusals_rx = Some(refusals_rx);
    for (socket, origin, tls) in sockets {
        let socket = match socket {
            Unstarted::Listening(std) => match tokio::net::TcpListener::from_std(std) {
                Ok(socket) => Socket::Listening(socket),
                Err(_) => continue,
            },
            Unstarted::Refusing(socket, time) => Socket::Refusing(socket, time),
        };
        let refusals = match origin {
            Origin::Primary => refusals_rx.take(),
            _ => None,
        };
        let listener = Listener {
            socket,
            origin,
            tls,
            refusals,
        };
        tokio::spawn(server::serve(listener, shared.clone()));
    }
    drop(shared);
    let mut player =
        Player::new(script, log, requests_rx, origins, watch, stop_tx).with_refusals(refusals_tx);
    tokio::select! {
        _ = player.play() => { let _ = (&mut shutdown).await; }
        _ = &mut shutdown => {}
    }
    player.shut_down();
}

/// A listener's socket before the runtime runs: listening, or (a script opening with
/// `refuse`) bound and refusing for a while.
enum Unstarted {
    Listening(std::net::TcpListener),
    Refusing(tokio::net::TcpSocket, Duration),
}

fn bind() -> Result<std::net::TcpListener, HttpStartError> {
    let io = |source| HttpStartError::Io {
        what: "listen on 127.0.0.1".into(),
        source,
    };
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(io)?;
    listener.set_nonblocking(true).map_err(io)?;
    Ok(listener)
}

fn write_ca(state_dir: &Path, pem: &str) -> Result<PathBuf, HttpStartError> {
    let io = |source| HttpStartError::Io {
        what: format!("write the CA certificate in {}", state_dir.display()),
        source,
    };
    std::fs::create_dir_all(state_dir).map_err(io)?;
    let path = state_dir.join(CA_FILE);
    std::fs::write(&path, pem).map_err(io)?;
    Ok(path)
}
