//! `mcp-conformance matrix`: rows from a rows file, each a driver, held against their
//! baselines (a known failure passes, an unlisted one or a stale entry fails the matrix);
//! the checked-in rows and baselines are valid, every entry with its rule and evidence.

use assert_cmd::Command;
use mcp_conformance::harness::Baseline;
use mcp_conformance::matrix::rows::Rows;
use mcp_conformance::scenario;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The reference client (strict) behind the proxy driver that drops per-call timeouts:
/// it fails exactly timeouts/per-call-override and timeouts/per-call-override-shorter.
fn rows(dir: &Path) -> PathBuf {
    let proxy = root().join("tests/drivers/no_call_timeout.py");
    rows_with(
        dir,
        &format!(
            "name = \"no-call-timeout\"\nprofile = \"strict\"\nreference = true\ndriver = \"python3 {} -- {{mcp-conformance}} driver --profile strict\"\n",
            proxy.display()
        ),
    )
}

/// A rows file in `dir`: the reference client (strict), then a row of the fields `row`.
fn rows_with(dir: &Path, row: &str) -> PathBuf {
    let text = format!(
        "[[row]]\nname = \"reference-strict\"\nprofile = \"strict\"\nreference = true\ndriver = \"{{mcp-conformance}} driver --profile strict\"\n\n[[row]]\n{row}"
    );
    let path = dir.join("matrix.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn baseline(dir: &Path, scenarios: &[&str]) {
    std::fs::create_dir_all(dir.join("no-call-timeout")).unwrap();
    let entries: String = scenarios
        .iter()
        .map(|s| {
            format!(
                "[[expected]]\nscenario = \"{s}\"\nrule = \"timeouts.call.override\"\nreason = \"the proxy drops timeout_ms\"\nevidence = \"tests/drivers/no_call_timeout.py:8: request.pop(\\\"timeout_ms\\\", None)\"\n\n"
            )
        })
        .collect();
    std::fs::write(dir.join("no-call-timeout/baseline.toml"), entries).unwrap();
}

fn matrix(rows: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("mcp-conformance")
        .unwrap()
        .arg("matrix")
        .arg("--rows")
        .arg(rows)
        .args(["--no-build", "timeouts/per-call-override"])
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
}

#[test]
fn a_listed_failure_is_known_an_unlisted_one_fails_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(dir.path());
    baseline(dir.path(), &["timeouts/per-call-override"]);
    matrix(&rows, &[])
        .code(1)
        .stdout(predicate::str::is_match(r"timeouts/per-call-override +pass +known\n").unwrap())
        .stdout(
            predicate::str::is_match(r"timeouts/per-call-override-shorter +pass +FAIL\n").unwrap(),
        )
        .stdout(predicate::str::contains(
            "no-call-timeout FAIL: timeouts/per-call-override-shorter",
        ))
        .stdout(
            predicate::str::is_match(
                r"no-call-timeout +mcp-refclient 0.1.0 +strict +0 +1 +1 +0 +0 +0",
            )
            .unwrap(),
        )
        .stdout(predicate::str::is_match(r"timeouts +2/2 +0/2").unwrap())
        .stderr(predicate::str::contains(
            "matrix: no-call-timeout done: 2 scenario(s), 2 failed before the baseline",
        ));
}

#[test]
fn every_failure_listed_is_a_green_matrix_and_json_and_markdown_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(dir.path());
    baseline(
        dir.path(),
        &[
            "timeouts/per-call-override",
            "timeouts/per-call-override-shorter",
        ],
    );
    let json = dir.path().join("matrix.json");
    let out = matrix(
        &rows,
        &["--markdown", "-", "--json", json.to_str().unwrap()],
    )
    .code(0);
    let markdown = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        markdown
            .contains("| no-call-timeout | mcp-refclient 0.1.0 | strict | 0 | 0 | 2 | 0 | 0 | 0 |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| `timeouts/per-call-override-shorter` | pass | known |"),
        "{markdown}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(report["rows"][1]["counts"]["baselined"], 2, "{report}");
    assert_eq!(report["rows"][0]["counts"]["pass"], 2, "{report}");
    assert_eq!(
        report["groups"]["timeouts"]["no-call-timeout"], "0/2",
        "{report}"
    );
    // Both scenarios hold a specification rule, none a robustness or profile rule.
    assert_eq!(
        report["tiers"]["specification"]["reference-strict"], "2/2",
        "{report}"
    );
    assert_eq!(
        report["tiers"]["specification"]["no-call-timeout"], "0/2",
        "{report}"
    );
    assert_eq!(
        report["tiers"]["robustness"]["no-call-timeout"], "-",
        "{report}"
    );
    assert!(
        markdown.contains("| specification | 2/2 | 0/2 |"),
        "{markdown}"
    );
    assert_eq!(
        report["columns"][1]["cells"][0]["rule"], "timeouts.call.override",
        "{report}"
    );
}

#[test]
fn a_prefix_run_holds_its_scenarios_to_a_baseline_that_names_others_too() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(dir.path());
    baseline(
        dir.path(),
        &[
            "timeouts/per-call-override",
            "timeouts/per-call-override-shorter",
        ],
    );
    Command::cargo_bin("mcp-conformance")
        .unwrap()
        .args(["matrix", "--rows"])
        .arg(&rows)
        .args([
            "--no-build",
            "--row",
            "no-call-timeout",
            "timeouts/per-call-override-shorter",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(0)
        .stdout(predicate::str::is_match(r"timeouts/per-call-override-shorter +known\n").unwrap())
        .stdout(
            predicate::str::is_match(r"timeouts/per-call-override +")
                .unwrap()
                .not(),
        );
}

#[test]
fn a_listed_scenario_that_passes_is_stale_and_fails_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(dir.path());
    baseline(
        dir.path(),
        &[
            "timeouts/per-call-override",
            "timeouts/per-call-override-shorter",
        ],
    );
    std::fs::create_dir_all(dir.path().join("reference-strict")).unwrap();
    let stale = "[[expected]]\nscenario = \"timeouts/per-call-override\"\nrule = \"timeouts.call.override\"\nreason = \"r\"\nevidence = \"e\"\n";
    std::fs::write(dir.path().join("reference-strict/baseline.toml"), stale).unwrap();
    matrix(&rows, &["--row", "reference-strict"])
        .code(1)
        .stdout(predicate::str::is_match(r"timeouts/per-call-override +STALE\n").unwrap())
        .stdout(predicate::str::contains("stale baseline entry"));
}

#[test]
fn a_baseline_entry_without_evidence_or_with_a_rule_the_scenario_does_not_check_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(dir.path());
    std::fs::create_dir_all(dir.path().join("no-call-timeout")).unwrap();
    let path = dir.path().join("no-call-timeout/baseline.toml");
    std::fs::write(&path, "[[expected]]\nscenario = \"timeouts/per-call-override\"\nrule = \"timeouts.call.override\"\nreason = \"r\"\n").unwrap();
    matrix(&rows, &[]).code(2).stderr(predicate::str::contains(
        "needs a `rule` and one line of `evidence`",
    ));
    std::fs::write(&path, "[[expected]]\nscenario = \"timeouts/per-call-override\"\nrule = \"stdio.banner.skipped\"\nreason = \"r\"\nevidence = \"e\"\n").unwrap();
    matrix(&rows, &[]).code(2).stderr(predicate::str::contains(
        "not the rule `stdio.banner.skipped`",
    ));
}

#[test]
fn a_driver_claiming_another_profile_than_its_row_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("matrix.toml");
    std::fs::write(&path, "[[row]]\nname = \"liar\"\nprofile = \"kova\"\ndriver = \"{mcp-conformance} driver --profile strict\"\n").unwrap();
    matrix(&path, &[]).code(3).stderr(predicate::str::contains(
        "row `liar`: the driver claims the profile `strict`, the row says `kova`",
    ));
    matrix(&path, &["--row", "nobody"])
        .code(2)
        .stderr(predicate::str::contains("no row `nobody`"));
}

#[test]
fn the_checked_in_rows_and_every_baseline_are_valid_each_entry_with_its_rule_and_evidence() {
    let rows = Rows::load(&root().join("adapters/matrix.toml")).unwrap();
    let scenarios = scenario::load_all(&root().join("scenarios")).unwrap();
    let names: Vec<&str> = rows.row.iter().map(|r| r.name.as_str()).collect();
    for wanted in [
        "reference-strict",
        "rmcp",
        "yoagent",
        "kova",
        "typescript-sdk",
        "python-sdk",
    ] {
        assert!(names.contains(&wanted), "no row {wanted} in {names:?}");
    }
    for row in &rows.row {
        let path = row.baseline_path(&root().join("adapters"));
        let baseline = Baseline::load(&path, &scenarios).unwrap();
        baseline.require_evidence(&path).unwrap();
    }
}

/// Why a row's runs were not applicable, grouped with their counts, in every report: a
/// driver that declares no capability cannot express a per-call timeout.
#[test]
fn the_reports_group_the_runs_not_applicable_by_what_the_client_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let hangs = root().join("tests/drivers/hangs.py");
    let rows = rows_with(
        dir.path(),
        &format!(
            "name = \"bare\"\nprofile = \"strict\"\ndriver = \"python3 {}\"\n",
            hangs.display()
        ),
    );
    let json = dir.path().join("matrix.json");
    let out = matrix(
        &rows,
        &["--markdown", "-", "--json", json.to_str().unwrap()],
    )
    .code(0);
    let markdown = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        markdown.contains("| not applicable: why | reference-strict | bare |")
            && markdown.contains("| needs `call_timeout` | - | 2 |"),
        "{markdown}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(
        report["rows"][1]["not_applicable"]["needs `call_timeout`"], 2,
        "{report}"
    );
    assert_eq!(
        report["rows"][0]["not_applicable"],
        serde_json::json!({}),
        "{report}"
    );
}

/// A row of the reference client behind `tests/drivers/leaks_url.py` (it quotes the URL it
/// was given, key and all, in every error) under `profile`, named `leaks-url`.
fn leaks_url_row(dir: &Path, profile: &str) -> PathBuf {
    let leaks = root().join("tests/drivers/leaks_url.py");
    rows_with(
        dir,
        &format!(
            "name = \"leaks-url\"\nprofile = \"{profile}\"\ndriver = \"python3 {} -- {{mcp-conformance}} driver --profile {profile}\"\n",
            leaks.display()
        ),
    )
}

/// One verdict per rule: the leaking driver fails both rules of
/// `redaction/userinfo-kept-out-of-connect-error` (the server named by its origin alone, and
/// no credential anywhere), each in its own `[expect.by_rule]` table. A baseline entry for
/// the first does not hide the second: the matrix fails, naming it.
#[test]
fn a_known_failure_of_one_rule_does_not_hide_a_new_failure_of_another_in_the_same_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let rows = leaks_url_row(dir.path(), "yoagent");
    let scenario = "redaction/userinfo-kept-out-of-connect-error";
    let entry = |rule: &str| {
        format!(
            "[[expected]]\nscenario = \"{scenario}\"\nrule = \"{rule}\"\nreason = \"the proxy quotes the URL in errors\"\nevidence = \"tests/drivers/leaks_url.py:17: reply[\\\"error\\\"] = ... url[\\\"value\\\"]\"\n\n"
        )
    };
    std::fs::create_dir_all(dir.path().join("leaks-url")).unwrap();
    let baseline = dir.path().join("leaks-url/baseline.toml");
    let run = |entries: String| {
        std::fs::write(&baseline, entries).unwrap();
        let json = dir.path().join("matrix.json");
        let out = leaks_url_matrix(&rows, &json, scenario);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let cell = report["columns"][0]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["scenario"] == scenario)
            .unwrap()
            .clone();
        (out, cell)
    };
    let (out, cell) = run(entry("redaction.origin-only"));
    out.code(1)
        .stdout(predicate::str::contains(format!(
            "leaks-url FAIL: {scenario}"
        )))
        .stdout(predicate::str::contains(
            "rule redaction.credentials failed (no baseline entry explains it)",
        ))
        .stdout(predicate::str::contains(
            "never_contains (redaction.credentials)",
        ));
    assert_eq!(
        cell["rules"],
        serde_json::json!([
            { "rule": "redaction.origin-only", "mark": "baselined" },
            { "rule": "redaction.credentials", "mark": "fail" },
        ]),
        "{cell}"
    );
    // Each failing rule listed: the scenario is known.
    let (out, cell) = run(entry("redaction.origin-only") + &entry("redaction.credentials"));
    out.code(0);
    assert_eq!(cell["mark"], "baselined", "{cell}");
}

/// `run --client` judges a driver as the matrix does, by its declared profile: the same
/// verdict for each scenario, the same failed rules, the same rules not held (a strict
/// client is not held to yoagent's `redaction.origin-only`, and judged on the rest).
#[test]
fn run_client_and_the_matrix_give_one_driver_the_same_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let rows = leaks_url_row(dir.path(), "strict");
    let prefix = "redaction/";
    let matrix_json = dir.path().join("matrix.json");
    leaks_url_matrix(&rows, &matrix_json, prefix).code(1);
    let run_json = dir.path().join("run.json");
    let driver = format!(
        "python3 {} -- {} driver --profile strict",
        root().join("tests/drivers/leaks_url.py").display(),
        assert_cmd::cargo::cargo_bin("mcp-conformance").display()
    );
    Command::cargo_bin("mcp-conformance")
        .unwrap()
        .args(["run", "--client", &driver, "--json"])
        .arg(&run_json)
        .arg(prefix)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(1);
    /// Each scenario's verdict, failed rules and rules not held.
    fn verdicts(results: &[serde_json::Value]) -> Vec<String> {
        let mut out: Vec<String> = results
            .iter()
            .map(|r| {
                let mut failed: Vec<String> = r["failures"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|f| f["rules"].as_array().cloned().unwrap_or_default())
                    .map(|rule| rule.as_str().unwrap_or_default().to_string())
                    .collect();
                failed.sort();
                failed.dedup();
                let not_held: Vec<&str> = r["not_held"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n["rule"].as_str())
                    .collect();
                format!(
                    "{} {} failed {failed:?} not held {not_held:?}",
                    r["scenario"].as_str().unwrap_or_default(),
                    r["verdict"].as_str().unwrap_or_default()
                )
            })
            .collect();
        out.sort();
        out
    }
    let read = |path: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let from_run = verdicts(read(&run_json)["results"].as_array().unwrap());
    let matrix = read(&matrix_json);
    let cells: Vec<serde_json::Value> = matrix["columns"][0]["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.get("result").cloned())
        .collect();
    let from_matrix = verdicts(&cells);
    assert_eq!(from_run, from_matrix);
    // The run is mixed: a scenario judged on part of its rules, one failed, one not applicable.
    let all = from_run.join("\n");
    for wanted in [
        "redaction/userinfo-kept-out-of-connect-error fail failed [\"redaction.credentials\"] not held [\"redaction.origin-only\"]",
        "redaction/short-parts-kept not_applicable",
        "redaction/header-values-never-shown pass",
    ] {
        assert!(all.contains(wanted), "{wanted} not in:\n{all}");
    }
}

/// The matrix of the `leaks-url` row of `rows` over `scenarios`, its JSON report to `json`.
fn leaks_url_matrix(rows: &Path, json: &Path, scenarios: &str) -> assert_cmd::assert::Assert {
    Command::cargo_bin("mcp-conformance")
        .unwrap()
        .args(["matrix", "--no-build", "--row", "leaks-url", "--rows"])
        .arg(rows)
        .arg("--json")
        .arg(json)
        .arg(scenarios)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
}

/// A row is judged on the runs that bind it: a run that holds only another profile's promise
/// is not applicable and does not count among them (`stdio/exit-error-text` holds yoagent's
/// documented error text alone), while one the client cannot express does.
#[test]
fn the_runs_that_bind_a_row_leave_out_another_profiles_promise() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows_with(
        dir.path(),
        "name = \"third\"\nprofile = \"strict\"\ndriver = \"{mcp-conformance} driver --profile strict\"\n",
    );
    let json = dir.path().join("matrix.json");
    let out = Command::cargo_bin("mcp-conformance")
        .unwrap()
        .args(["matrix", "--rows", rows.to_str().unwrap(), "--no-build"])
        .args([
            "--json",
            json.to_str().unwrap(),
            "--markdown",
            "-",
            "stdio/exit-",
        ])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(0);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let third = &report["rows"][1];
    let counts = &third["counts"];
    let judged = counts["pass"].as_u64().unwrap() + counts["baselined"].as_u64().unwrap();
    let promise = third["not_applicable"]["another profile's promise (yoagent's documentation)"]
        .as_u64()
        .unwrap();
    assert!(judged > 0 && promise > 0, "{report}");
    assert_eq!(
        third["binding"],
        serde_json::json!({"judged": judged, "of": judged + counts["not_applicable"].as_u64().unwrap() - promise}),
        "{report}"
    );
    let markdown = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        markdown.contains("| third | mcp-refclient 0.1.0 | strict |")
            && markdown.contains(&format!(
                "| {judged}/{} |",
                judged + counts["not_applicable"].as_u64().unwrap() - promise
            )),
        "{markdown}"
    );
}
