//! Clients through the driver protocol (the reference client wrapped as a driver passes
//! every scenario of each profile, as in process: the reference rows of `rows`):
//! deliberately broken Python drivers fail exactly their rules' scenarios; drivers that
//! hang, exit or write garbage fail each scenario, bounded, and leave no process behind; a
//! reusable driver that leaves a server running after `reset` is replaced and noted (`rows`
//! holds reused drivers to the verdicts of drivers started per scenario). Each test takes a
//! lane.

use crate::{lane, support::*};
use mcp_conformance::cut::driver::pool::PoolCounts;
use mcp_conformance::cut::driver::{self, DriverClient, DriverPool};
use mcp_conformance::runner::RunOptions;
use mcp_conformance::scenario::LoadedScenario;
use mcp_conformance::verdict::{self, ScenarioResult, Verdict};
use mcp_refclient::Profile;
use std::path::Path;
use std::time::{Duration, Instant};

fn drivers_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/drivers"))
}

/// Scenarios at once: as `run` does on 2 cores (they mostly wait).
const WORKERS: usize = 8;

/// How long a driver may take to say hello: Python starting on a loaded 2-core machine.
const HELLO_WITHIN: Duration = Duration::from_secs(30);

/// Runs `scenarios` through the driver `argv` with the step guard `guard`, as `run --client` does
/// (its processes reused when it declares `reusable`).
fn run_driver(
    argv: Vec<String>,
    scenarios: &[LoadedScenario],
    guard: Duration,
) -> Vec<ScenarioResult> {
    run_driver_pooled(argv, scenarios, guard, true).0
}

/// [`run_driver`], reusing the driver's processes or (`reuse` false) starting one per
/// scenario, with what the pool did.
fn run_driver_pooled(
    argv: Vec<String>,
    scenarios: &[LoadedScenario],
    guard: Duration,
    reuse: bool,
) -> (Vec<ScenarioResult>, PoolCounts) {
    let described = driver::probe(&argv, HELLO_WITHIN).expect("the driver says hello");
    // Every driver here is the reference client, or one broken on purpose behind a proxy:
    // held to every rule of its profile's scenarios, as the matrix's reference rows are.
    let options = RunOptions {
        step_guard: guard,
        workers: WORKERS,
        every_rule: true,
        ..RunOptions::portable()
    };
    let pool = DriverPool::new(argv, described.clone(), HELLO_WITHIN, reuse);
    let results = verdict::run_all_clients_for(
        scenarios,
        &described,
        |scenario| pool.client(&scenario.scenario),
        &launcher(),
        options,
    );
    (results, pool.counts())
}

fn reference_driver(profile: Profile) -> Vec<String> {
    vec![
        conformance_bin().into(),
        "driver".into(),
        "--profile".into(),
        profile.name().into(),
    ]
}

/// A verdict's class and what failed, for comparing two runs.
fn gist(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Pass => "pass".into(),
        Verdict::Fail { failures } => format!(
            "fail {:?}",
            failures.iter().map(|f| &f.what).collect::<Vec<_>>()
        ),
        Verdict::NotApplicable { .. } => "n/a".into(),
        Verdict::HarnessFault { reason } => format!("harness {reason}"),
    }
}

/// Runs the scenarios of `folders` through the broken driver `script` (wrapping the
/// reference driver) and asserts that exactly those carrying one of `rules` fail — each
/// with a failure of the client, not of the harness — and the others pass or do not apply.
fn assert_fails_exactly(script: &str, folders: &[&str], rules: &[&str], must_fail: &[&str]) {
    let scenarios: Vec<LoadedScenario> = all_scenarios()
        .into_iter()
        .filter(|s| folders.contains(&s.area()) && s.profiles().contains(&Profile::Strict))
        .collect();
    let mut argv = vec![
        "python3".to_string(),
        drivers_dir().join(script).display().to_string(),
        "--".into(),
    ];
    argv.extend(reference_driver(Profile::Strict));
    let results = run_driver(argv, &scenarios, Duration::from_secs(10));
    for result in &results {
        let its_rules = result.rules.iter().any(|r| rules.contains(&r.as_str()));
        match &result.verdict {
            Verdict::Fail { .. } => assert!(
                its_rules,
                "{script}: {} failed outside {rules:?}: {:?}",
                result.scenario, result.verdict
            ),
            Verdict::HarnessFault { reason } => {
                panic!("{script}: {} harness fault: {reason}", result.scenario)
            }
            Verdict::Pass | Verdict::NotApplicable { .. } => {}
        }
    }
    for name in must_fail {
        let result = results
            .iter()
            .find(|r| r.scenario == *name)
            .unwrap_or_else(|| panic!("{name} ran"));
        assert!(
            matches!(result.verdict, Verdict::Fail { .. }),
            "{script}: {name} should fail: {:?}",
            result.verdict
        );
    }
}

#[test]
fn a_driver_that_quotes_the_full_url_fails_exactly_the_redaction_scenarios() {
    let _lane = lane();
    assert_fails_exactly(
        "leaks_url.py",
        &["redaction", "redirects", "auth"],
        &[
            "redaction.origin-only",
            "redaction.key-like-parts",
            "redaction.credentials",
        ],
        &[
            "redaction/handshake-error-origin-only",
            "redaction/userinfo-kept-out-of-connect-error",
            "redaction/status-body-origin-only",
        ],
    );
}

#[test]
fn a_driver_that_leaves_the_server_running_on_close_fails_exactly_the_kill_scenarios() {
    let _lane = lane();
    assert_fails_exactly(
        "keeps_server.py",
        // timeouts/: scenarios that close after a bounded call, some naming a kill rule.
        &["process", "lifecycle", "timeouts"],
        &[
            "process.drop.kills-command",
            "process.group.kills-group",
            "process.exited.closed",
        ],
        &[
            "process/close-kills-command",
            "process/drop-kills-command",
            "process/group-close-kills-descendants",
        ],
    );
}

#[test]
fn a_driver_whose_drop_keeps_the_connection_fails_exactly_the_let_go_scenarios() {
    let _lane = lane();
    assert_fails_exactly(
        "keeps_connection_on_drop.py",
        &["http", "legacy-sse"],
        &["http.shutdown.connections-closed"],
        &[
            "legacy-sse/drop-lets-go-of-stream",
            "http/drop-lets-go-of-listen-stream",
        ],
    );
}

#[test]
fn a_driver_that_ignores_the_per_call_timeout_fails_exactly_the_per_call_bound_scenarios() {
    let _lane = lane();
    assert_fails_exactly(
        "no_call_timeout.py",
        &["timeouts"],
        &[
            "timeouts.call.override",
            "timeouts.call.bounded",
            "timeouts.call.cancelled",
        ],
        &[
            "timeouts/per-call-override",
            "timeouts/per-call-override-shorter",
        ],
    );
}

#[test]
fn a_driver_that_starts_every_server_in_a_group_of_its_own_fails_the_sigint_scenario() {
    let _lane = lane();
    // Through the driver, the driver is the host: a Ctrl+C must reach a server in its group.
    assert_fails_exactly(
        "shields_server.py",
        &["process"],
        // A server started in a group of its own (the driver's) has that group killed when its
        // launcher exits, so the scenarios of a server left its own group fail too.
        &["process.group.no-sigint", "process.group.only-own"],
        &[
            "process/sigint-reaches-server-without-group",
            "process/launcher-exit-without-group-server-kept",
        ],
    );
}

#[test]
fn a_driver_whose_first_header_value_wins_fails_exactly_the_replace_scenario() {
    let _lane = lane();
    assert_fails_exactly(
        "first_header_wins.py",
        &["headers"],
        &["headers.replace"],
        &["headers/replace"],
    );
}

#[test]
fn a_driver_that_ignores_the_status_of_initialized_fails_exactly_the_undeliverable_scenarios() {
    let _lane = lane();
    assert_fails_exactly(
        "ignores_initialized_status.py",
        &["lifecycle"],
        &["lifecycle.initialized.undeliverable"],
        &["lifecycle/initialized-refused-over-http"],
    );
}

#[test]
fn a_driver_that_refuses_a_tab_inside_a_value_fails_exactly_the_validation_scenario() {
    let _lane = lane();
    assert_fails_exactly(
        "refuses_tab_in_value.py",
        &["headers"],
        &["headers.validated"],
        &["headers/validated-space-and-tab-inside"],
    );
}

#[test]
fn a_driver_that_dumps_the_headers_into_a_call_error_fails_exactly_the_sensitive_scenarios() {
    let _lane = lane();
    assert_fails_exactly(
        "echoes_header_values.py",
        &["headers"],
        // Every scenario holds the client to no header value in what it produces: the one
        // whose call fails with a header set (a 404) fails that check too.
        &["headers.sensitive", "headers.every-request"],
        &["headers/sensitive-echoed-in-500-body"],
    );
}

#[test]
fn a_driver_that_can_only_forget_a_connection_is_not_judged_on_what_a_drop_ends() {
    let _lane = lane();
    let scenarios: Vec<LoadedScenario> = all_scenarios()
        .into_iter()
        .filter(|s| s.area() == "process" && s.profiles().contains(&Profile::Strict))
        .collect();
    let mut argv = vec![
        "python3".to_string(),
        drivers_dir()
            .join("forgets_on_drop.py")
            .display()
            .to_string(),
        "--".into(),
    ];
    argv.extend(reference_driver(Profile::Strict));
    let results = run_driver(argv, &scenarios, Duration::from_secs(10));
    let mut not_applicable = Vec::new();
    for result in &results {
        match &result.verdict {
            Verdict::Pass => {}
            Verdict::NotApplicable { reason } => {
                assert!(
                    reason.contains("`drop`") && reason.contains("not declared by"),
                    "{}: {reason}",
                    result.scenario
                );
                not_applicable.push(result.scenario.as_str());
            }
            other => panic!("{}: {other:?}", result.scenario),
        }
    }
    not_applicable.sort();
    assert_eq!(
        not_applicable,
        [
            "process/descendant-survives-without-group",
            "process/drop-kills-command",
            "process/drop-without-group-spares-server-group",
            "process/group-drop-kills-descendants",
            "process/group-drop-kills-sigterm-ignoring-child",
        ]
    );
}

#[test]
fn a_reused_driver_that_leaves_its_server_running_after_reset_is_replaced_and_noted() {
    let _lane = lane();
    let path = drivers_dir()
        .join("keeps_server_on_reset.py")
        .display()
        .to_string();
    let mut argv = vec!["python3".to_string(), path.clone(), "--".into()];
    argv.extend(reference_driver(Profile::Strict));
    let stdio = [
        "stdio/banner-before-initialize",
        "stdio/framing-one-line-per-message",
    ];
    let mut scenarios: Vec<LoadedScenario> = stdio.iter().map(|name| scenario(name)).collect();
    scenarios.push(scenario("http/accept-every-post"));
    let (results, counts) = run_driver_pooled(argv, &scenarios, Duration::from_secs(10), true);
    for result in &results {
        assert!(
            !matches!(result.verdict, Verdict::HarnessFault { .. }),
            "{}: {:?}",
            result.scenario,
            result.verdict
        );
        let note = result.note.as_deref().unwrap_or_default();
        if stdio.contains(&result.scenario.as_str()) {
            assert!(
                note.contains("replaced by a fresh one")
                    && note.contains("still ran")
                    && note.contains("after `reset`"),
                "{}: {note:?}",
                result.scenario
            );
        } else {
            assert_eq!(note, "", "{}: nothing was left over HTTP", result.scenario);
        }
    }
    assert_eq!(counts.replaced, stdio.len(), "{counts:?}");
    assert_eq!(
        processes_running(&path),
        Vec::<u32>::new(),
        "the replaced drivers are gone"
    );
}

/// Pids of live processes whose command line mentions `needle`.
fn processes_running(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(needle)
                && mcp_conformance::probe::procs::is_alive(*pid)
        })
        .collect()
}

#[rstest::rstest]
#[case::sleeps_forever("hangs.py", &["did not finish within the step guard"])]
#[case::exits_at_once("exits.py", &["the driver closed its output", "cannot write to the driver"])]
#[case::prints_garbage("garbage.py", &["the driver wrote something that is not a reply"])]
fn a_driver_that_breaks_the_protocol_fails_each_scenario_bounded_and_leaves_nothing(
    #[case] script: &str,
    #[case] says: &[&str],
) {
    let _lane = lane();
    let path = drivers_dir().join(script).display().to_string();
    let scenarios = vec![
        scenario("stdio/banner-before-initialize"),
        scenario("http/accept-every-post"),
    ];
    let started = Instant::now();
    let results = run_driver(
        vec!["python3".into(), path.clone()],
        &scenarios,
        Duration::from_millis(500),
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    for result in &results {
        match &result.verdict {
            Verdict::Fail { failures } => {
                assert_eq!(failures[0].what, "client", "{script}: {failures:?}");
                assert!(
                    says.iter().any(|text| failures[0].actual.contains(text)),
                    "{script}: {failures:?}"
                );
            }
            other => panic!(
                "{script} on {}: expected a failure, got {other:?}",
                result.scenario
            ),
        }
    }
    assert_eq!(
        processes_running(&path),
        Vec::<u32>::new(),
        "{script} left processes behind"
    );
}

#[test]
fn a_client_that_lists_tools_before_each_call_passes_by_the_incidental_policy() {
    let _lane = lane();
    let mut argv = vec![
        "python3".to_string(),
        drivers_dir().join("lists_first.py").display().to_string(),
        "--".into(),
    ];
    argv.extend(reference_driver(Profile::Strict));
    let described = driver::probe(&argv, HELLO_WITHIN).expect("the driver says hello");
    let client = DriverClient::new(argv, described, HELLO_WITHIN);
    // The issue's example: a script about banners that expects `tools/call` sees `tools/list` first.
    let loaded = scenario("stdio/banner-before-initialize");
    let (result, outcome) =
        verdict::run_client_one(&loaded, client, &launcher(), RunOptions::portable());
    assert_eq!(result.verdict, Verdict::Pass);
    let wire = outcome.expect("it ran").wire;
    assert!(wire.iter().any(|r| matches!(r, mcp_mock_servers::wire_log::Record::Incidental { method } if method == "tools/list")));
}

#[test]
fn a_client_that_lists_tools_before_each_call_passes_every_strict_scenario() {
    let _lane = lane();
    // Listing first breaks no rule: a scenario it fails demands more than its rule (issue 10).
    let scenarios: Vec<LoadedScenario> = all_scenarios()
        .into_iter()
        .filter(|s| s.profiles().contains(&Profile::Strict))
        .collect();
    let mut argv = vec![
        "python3".to_string(),
        drivers_dir().join("lists_first.py").display().to_string(),
        "--".into(),
    ];
    argv.extend(reference_driver(Profile::Strict));
    let results = run_driver(argv, &scenarios, Duration::from_secs(20));
    let failed: Vec<String> = results
        .iter()
        .filter(|r| !matches!(r.verdict, Verdict::Pass | Verdict::NotApplicable { .. }))
        .map(|r| format!("{}: {}", r.scenario, gist(&r.verdict)))
        .collect();
    assert_eq!(failed, Vec::<String>::new());
    assert!(
        results
            .iter()
            .filter(|r| r.verdict == Verdict::Pass)
            .count()
            > 150
    );
}

#[rstest::rstest]
#[case::answered_by_default(None, 0)]
#[case::a_mismatch_without_the_policy(Some("[]"), 3)]
fn a_tools_list_before_the_expected_call_is_incidental_traffic(
    #[case] policy: Option<&str>,
    #[case] exit: i32,
) {
    let _lane = lane();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let log = dir.path().join("wire.jsonl");
    let incidental = policy
        .map(|p| format!(", \"incidental\": {p}"))
        .unwrap_or_default();
    let text = format!("{{\"steps\": [{{\"handshake\": {{}}}}, {{\"expect\": {{\"method\": \"tools/call\"}}}}, {{\"reply\": {{}}}}]{incidental}}}");
    std::fs::write(&script, text).unwrap();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
    ]
    .join("\n");
    let output = assert_cmd::Command::new(conformance_bin())
        .args(["mock-stdio", "--script"])
        .arg(&script)
        .arg("--log")
        .arg(&log)
        .write_stdin(input + "\n")
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(exit),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let wire = mcp_mock_servers::wire_log::read_wire_log(&log).unwrap();
    let recorded = wire.iter().any(|r| matches!(r, mcp_mock_servers::wire_log::Record::Incidental { method } if method == "tools/list"));
    if exit == 0 {
        assert!(
            stdout.contains(r#""id":2"#) && stdout.contains(r#""tools""#),
            "{stdout}"
        );
        assert!(stdout.contains(r#""id":3"#), "{stdout}");
        assert!(recorded);
        let summary = mcp_conformance::probe::received_summary(&wire);
        assert_eq!(
            summary,
            ["initialize", "notifications/initialized", "tools/call"]
        );
    } else {
        assert!(!recorded && !stdout.contains(r#""id":2"#), "{stdout}");
    }
}

#[test]
fn run_client_names_the_client_in_every_report_and_exits_as_run_does() {
    let _lane = lane();
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let garbage = format!("python3 {}", drivers_dir().join("garbage.py").display());
    assert_cmd::Command::new(conformance_bin())
        .args([
            "run",
            "stdio/banner-before-initialize",
            "--step-guard-ms",
            "2000",
            "--client",
            &garbage,
            "--json",
        ])
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout(predicates::str::contains("client: garbage 0"))
        .stdout(predicates::str::contains("not a reply"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["clients"], serde_json::json!(["garbage 0"]));
    assert_eq!(report["results"][0]["client"], "garbage 0");
    assert!(std::fs::read_to_string(&junit)
        .unwrap()
        .contains("garbage 0"));
    let reference = format!("{} driver", conformance_bin());
    assert_cmd::Command::new(conformance_bin())
        .args([
            "run",
            "stdio/banner-before-initialize",
            "--client",
            &reference,
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0)
        .stdout(predicates::str::contains("client: mcp-refclient"));
}

/// Whatever a driver does, each scenario it runs ends within its bound
/// (`runner::bound::wall_bound`: the sum of its step guards and the runner's own bounded
/// waits), its wait for a place beside the others aside: a driver that answers nothing, not
/// even `reset`, over a spread of every area; and one that plays every step but never
/// answers `reset` (the runner waits out its `reset` bound each time).
#[rstest::rstest]
#[case::answers_nothing(&["python3", "stalls_everything.py"], 13, 12)]
// Each waits out the 5 s `reset` bound: four, side by side.
#[case::never_answers_reset(&["python3", "stalls_reset.py", "--"], 70, 3)]
fn every_scenario_ends_within_its_bound_whatever_the_driver_does(
    #[case] command: &[&str],
    #[case] every: usize,
    #[case] least_run: usize,
) {
    let _lane = lane();
    let mut argv: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    argv[1] = drivers_dir().join(&argv[1]).display().to_string();
    if argv.last().is_some_and(|a| a == "--") {
        argv.extend(reference_driver(Profile::Strict));
    }
    let guard = Duration::from_millis(400);
    let scenarios: Vec<LoadedScenario> = all_scenarios()
        .into_iter()
        .filter(|s| s.profiles().contains(&Profile::Strict))
        .step_by(every)
        .collect();
    let (results, counts) = run_driver_pooled(argv, &scenarios, guard, true);
    let mut ran = 0;
    for (scenario, result) in scenarios.iter().zip(&results) {
        if result.evidence.is_none() {
            continue;
        }
        ran += 1;
        let bound = mcp_conformance::runner::bound::wall_bound(&scenario.scenario, guard);
        let own = result.millis - result.waited_ms;
        assert!(
            own <= bound.as_millis(),
            "{}: {own} ms of its own, past its bound of {} ms ({result:?})",
            result.scenario,
            bound.as_millis()
        );
        assert!(
            matches!(result.verdict, Verdict::Fail { .. }) || command[1] == "stalls_reset.py",
            "{}: {:?}",
            result.scenario,
            result.verdict
        );
    }
    assert!(ran >= least_run, "{ran} scenarios ran");
    // Each process was given up on, and each replacement noted.
    assert_eq!(counts.replaced, ran - counts.fresh, "{counts:?}");
}
