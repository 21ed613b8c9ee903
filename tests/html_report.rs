//! The HTML report (`matrix --html DIR`) as a browser shows it: a small matrix of real runs
//! (the reference client, and the reference client behind two proxy drivers that forget
//! `drop` and drop per-call timeouts, with a baseline) rendered, then loaded in headless
//! Chromium. The tests assert on the DOM after the filter script ran: the grid's cells and
//! their computed colours, a failure's page, the filters; and that no page holds a secret
//! handed to the client or a raw control character.
//!
//! Chromium is installed on first use the way the validator's servers are: `/usr/bin/chromium`
//! (Debian's `chromium`), `apt-get install` when it is missing and the tests run as root, once,
//! under an exclusive `flock` on `target/chromium.lock`; otherwise a clear error says what to
//! install.

use assert_cmd::Command;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The secrets `redaction/header-values-never-shown` hands the client.
const SECRETS: [&str; 2] = ["hdr-secret-77aa88bb", "bearer-secret-12345678"];

/// The small matrix's scenarios, and the verdict of each under each row.
const EXPECTED: [(&str, [&str; 2]); 5] = [
    ("process/drop-kills-command", ["pass", "na"]),
    ("redaction/header-values-never-shown", ["pass", "pass"]),
    ("stdio/banner-before-initialize", ["pass", "pass"]),
    ("timeouts/per-call-override-shorter", ["pass", "fail"]),
    ("timeouts/per-call-override", ["pass", "known"]),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The browser, installed first if needed. Panics with what to do when it cannot be.
fn chromium() -> &'static Path {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    if let Err(why) = INSTALLED.get_or_init(install_chromium) {
        panic!("{why}");
    }
    Path::new(CHROMIUM)
}

fn install_chromium() -> Result<(), String> {
    let target = root().join("target");
    std::fs::create_dir_all(&target).map_err(|e| format!("cannot create target/: {e}"))?;
    let lock_path = target.join("chromium.lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    // SAFETY: flock on a descriptor this function owns; released when `lock` is dropped.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!(
            "cannot lock {}: {}",
            lock_path.display(),
            std::io::Error::last_os_error()
        ));
    }
    if Path::new(CHROMIUM).exists() {
        return Ok(());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!(
            "the HTML report tests need headless Chromium at {CHROMIUM}: install Debian's \
             `chromium` package (`sudo apt-get install -y chromium`), or run the tests as root \
             and they install it"
        ));
    }
    let apt = |args: &[&str]| {
        std::process::Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
    };
    eprintln!("installing chromium (apt-get) for the HTML report tests");
    let first = apt(&["install", "-y", "chromium"]);
    if !first.as_ref().is_ok_and(|o| o.status.success()) {
        // A fresh machine's package lists may be missing or stale.
        let _ = apt(&["update"]);
        let second =
            apt(&["install", "-y", "chromium"]).map_err(|e| format!("cannot run apt-get: {e}"))?;
        if !second.status.success() {
            return Err(format!(
                "apt-get install -y chromium failed ({}): {}",
                second.status,
                String::from_utf8_lossy(&second.stderr)
            ));
        }
    }
    match Path::new(CHROMIUM).exists() {
        true => Ok(()),
        false => Err(format!(
            "apt-get installed chromium, but {CHROMIUM} is not there"
        )),
    }
}

/// Runs headless Chromium on `url` with `mode` (`--dump-dom`, `--screenshot=…`); returns
/// its stdout (the DOM after the scripts ran, for `--dump-dom`).
fn browse(url: &str, mode: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let stdout = tempfile::NamedTempFile::new().unwrap();
    let mut child = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(mode)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(stdout.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium on {url}: {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium on {url} took over 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(stdout.path()).unwrap()
}

fn dom(url: &str) -> String {
    browse(url, &["--dump-dom".to_string()])
}

fn url(path: &Path, fragment: &str) -> String {
    format!("file://{}{fragment}", path.display())
}

/// The report of the small matrix, written once for every test of this binary.
fn report() -> &'static Path {
    static REPORT: OnceLock<PathBuf> = OnceLock::new();
    REPORT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let scenarios = dir.join("scenarios");
        for (name, _) in EXPECTED {
            let to = scenarios.join(format!("{name}.toml"));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root().join(format!("scenarios/{name}.toml")), to).unwrap();
        }
        let drivers = root().join("tests/drivers");
        let rows = format!(
            "[[row]]\nname = \"reference-strict\"\nprofile = \"strict\"\nreference = true\n\
             driver = \"{{mcp-conformance}} driver --profile strict\"\n\n\
             [[row]]\nname = \"forgetful\"\nprofile = \"strict\"\nreference = true\n\
             driver = \"python3 {} -- python3 {} -- {{mcp-conformance}} driver --profile strict\"\n",
            drivers.join("forgets_on_drop.py").display(),
            drivers.join("no_call_timeout.py").display(),
        );
        std::fs::write(dir.join("matrix.toml"), rows).unwrap();
        std::fs::create_dir_all(dir.join("forgetful")).unwrap();
        std::fs::write(
            dir.join("forgetful/baseline.toml"),
            "[[expected]]\nscenario = \"timeouts/per-call-override\"\nrule = \"timeouts.call.override\"\n\
             reason = \"the proxy drops timeout_ms\"\n\
             evidence = \"tests/drivers/no_call_timeout.py:8: request.pop(\\\"timeout_ms\\\", None)\"\n",
        )
        .unwrap();
        let out = dir.join("html");
        Command::cargo_bin("mcp-conformance")
            .unwrap()
            .arg("matrix")
            .arg("--rows")
            .arg(dir.join("matrix.toml"))
            .arg("--scenarios")
            .arg(&scenarios)
            .arg("--html")
            .arg(&out)
            .arg("--no-build")
            .timeout(Duration::from_secs(180))
            .assert()
            .code(1)
            .stderr(predicates::str::contains("html report: "));
        out
    })
}

/// The grid's cells row by row: the scenario's name, and each cell's classes and (when the
/// DOM has it) computed background colour.
fn grid(dom: &str) -> Vec<(String, Vec<(String, String)>)> {
    dom.split("<tr class=\"scenario\"")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap()];
            let name = between(row, "<th class=\"name\">", "<br>").to_string();
            let cells = row
                .split("<td class=\"cell ")
                .skip(1)
                .map(|cell| {
                    let class = cell[..cell.find('"').unwrap()].to_string();
                    let colour = cell
                        .find("data-bg=\"")
                        .map(|_| between(cell, "data-bg=\"", "\"").to_string())
                        .unwrap_or_default();
                    (class, colour)
                })
                .collect();
            (name, cells)
        })
        .collect()
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {text}"))
        + start.len();
    let to = text[from..].find(end).unwrap() + from;
    &text[from..to]
}

#[test]
fn the_grid_has_a_cell_per_scenario_and_row_coloured_by_its_verdict() {
    let report = report();
    // The index with a probe that writes each cell's computed background beside it.
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    let probe = index.replace(
        "</body>",
        "<script>document.querySelectorAll('td.cell').forEach(function (c) { \
         c.setAttribute('data-bg', getComputedStyle(c).backgroundColor); });</script></body>",
    );
    // In a folder of its own, with the report's stylesheet and script: the report's folder
    // stays as written for the other tests.
    let probe_dir = tempfile::tempdir().unwrap();
    for asset in ["style.css", "filter.js"] {
        std::fs::copy(report.join(asset), probe_dir.path().join(asset)).unwrap();
    }
    let probe_path = probe_dir.path().join("index.html");
    std::fs::write(&probe_path, probe).unwrap();
    let grid = grid(&dom(&url(&probe_path, "")));
    assert_eq!(grid.len(), EXPECTED.len(), "{grid:?}");
    assert_eq!(grid.iter().map(|(_, cells)| cells.len()).sum::<usize>(), 10);
    let colour = |verdict: &str| match verdict {
        "pass" => "rgb(45, 164, 78)",
        "fail" => "rgb(207, 34, 46)",
        "known" => "rgb(191, 135, 0)",
        "na" => "rgb(208, 215, 222)",
        other => panic!("no colour for {other}"),
    };
    for (name, verdicts) in EXPECTED {
        let (_, cells) = grid
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no row {name} in {grid:?}"));
        for ((class, bg), verdict) in cells.iter().zip(verdicts) {
            assert_eq!(class, verdict, "{name}");
            assert_eq!(bg, colour(verdict), "{name}: {verdict}");
        }
    }
}

#[test]
fn a_failure_page_shows_expected_against_observed_and_the_wire_transcript() {
    let report = report();
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    let href = between(
        &index[index.find("data-verdict=\"fail\"><a").unwrap()..],
        "href=\"",
        "\"",
    )
    .to_string();
    let page = dom(&url(&report.join(&href), ""));
    assert!(
        page.contains("<h1>timeouts/per-call-override-shorter</h1>"),
        "{page}"
    );
    assert!(page.contains("id=\"verdict\">FAIL<"), "{page}");
    let expected = between(&page, "<td class=\"expected\">", "</td>");
    let observed = between(&page, "<td class=\"observed\">", "</td>");
    assert!(
        expected.contains("a client that answers every step"),
        "{expected}"
    );
    assert!(observed.contains("step 2 did not finish"), "{observed}");
    let wire = between(&page, "<pre class=\"transcript\">", "</pre>");
    assert!(
        wire.contains("→ {") && wire.contains("\"method\":\"tools/call\"") && wire.contains("← {"),
        "{wire}"
    );
    assert!(page.contains("timeouts.call.override"), "{page}");
    // The baselined failure's page gives the baseline's reason and evidence.
    let known = between(
        &index[index.find("data-verdict=\"known\"><a").unwrap()..],
        "href=\"",
        "\"",
    )
    .to_string();
    let page = dom(&url(&report.join(known), ""));
    assert!(
        page.contains("the proxy drops timeout_ms (evidence: tests/drivers/no_call_timeout.py:8"),
        "{page}"
    );
}

/// The rows the filter left visible, and the cells of those it left visible.
fn shown(dom: &str) -> (Vec<String>, usize) {
    let grid_start = dom.find("<table class=\"grid\"").unwrap();
    let mut rows = Vec::new();
    let mut cells = 0;
    for row in dom[grid_start..].split("<tr class=\"scenario\"").skip(1) {
        let row = &row[..row.find("</tr>").unwrap()];
        let head = &row[..row.find('>').unwrap()];
        if head.contains("hidden") {
            continue;
        }
        rows.push(between(row, "<th class=\"name\">", "<br>").to_string());
        cells += row
            .split("<td class=\"cell ")
            .skip(1)
            .filter(|cell| !cell[..cell.find('"').unwrap()].contains("out"))
            .count();
    }
    (rows, cells)
}

#[test]
fn filters_from_the_address_hide_what_does_not_match() {
    let index = report().join("index.html");
    let (rows, cells) = shown(&dom(&url(&index, "")));
    assert_eq!((rows.len(), cells), (5, 10));
    let (rows, cells) = shown(&dom(&url(&index, "#verdict=fail")));
    assert_eq!(rows, ["timeouts/per-call-override-shorter"]);
    assert_eq!(cells, 1, "only the failing cell of its row");
    let (rows, cells) = shown(&dom(&url(&index, "?area=timeouts")));
    assert_eq!(
        rows,
        [
            "timeouts/per-call-override-shorter",
            "timeouts/per-call-override"
        ]
    );
    assert_eq!(cells, 4);
    let (rows, _) = shown(&dom(&url(&index, "#rule=timeouts.call.typed")));
    assert_eq!(rows, ["timeouts/per-call-override-shorter"]);
    let (rows, cells) = shown(&dom(&url(&index, "?verdict=na&area=process")));
    assert_eq!(
        (rows, cells),
        (vec!["process/drop-kills-command".to_string()], 1)
    );
}

#[test]
fn no_page_holds_a_secret_or_a_raw_control_character() {
    let report = report();
    let mut files = Vec::new();
    let mut folders = vec![report.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    // index, style, script, and a page per cell that ran (10).
    assert_eq!(files.len(), 13, "{files:?}");
    let mut redaction_pages = 0;
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        for secret in SECRETS {
            assert!(!text.contains(secret), "{} holds {secret}", file.display());
        }
        if let Some(at) = bytes
            .iter()
            .position(|&b| (b < 0x20 && !matches!(b, b'\n' | b'\t' | b'\r')) || b == 0x7f)
        {
            panic!(
                "{} has the raw byte {:#x} at {at}",
                file.display(),
                bytes[at]
            );
        }
        if text.contains("<h1>redaction/header-values-never-shown</h1>") {
            // The client was handed the secrets and sent them: the wire shows the requests.
            assert!(text.contains("x-api-key"), "{text}");
            redaction_pages += 1;
        }
    }
    assert_eq!(redaction_pages, 2);
}

/// The screenshots in the guide (`docs/src/images/`) with `UPDATE_DOCS=1`; otherwise into a
/// temporary folder, so a plain test run leaves the checkout alone.
#[test]
fn screenshots_of_the_index_and_of_a_failure_page() {
    let report = report();
    let keep = std::env::var_os("UPDATE_DOCS").is_some();
    let scratch = tempfile::tempdir().unwrap();
    let folder = match keep {
        true => root().join("docs/src/images"),
        false => scratch.path().to_path_buf(),
    };
    std::fs::create_dir_all(&folder).unwrap();
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    let failure = between(
        &index[index.find("data-verdict=\"fail\"><a").unwrap()..],
        "href=\"",
        "\"",
    )
    .to_string();
    for (page, name) in [
        (report.join("index.html"), "html-report-index.png"),
        (report.join(failure), "html-report-failure.png"),
    ] {
        let png = folder.join(name);
        browse(
            &url(&page, ""),
            &[
                format!("--screenshot={}", png.display()),
                "--window-size=1280,900".to_string(),
            ],
        );
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{name} is no PNG");
        assert!(bytes.len() < 300_000, "{name}: {} bytes", bytes.len());
    }
}

/// `validate --html`: a check × revision grid, here of a scripted server that answers `ping`
/// wrongly, with the failure's page showing expected against observed and the exchange.
#[test]
fn validate_writes_a_check_grid_with_a_failure_and_its_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("html");
    let bin = assert_cmd::cargo::cargo_bin("mcp-conformance");
    Command::new(&bin)
        .args(["validate", "--strict", "--timeout", "3s"])
        .args([
            "--only",
            "server.ping",
            "--only",
            "server.initialize.result",
        ])
        .arg("--html")
        .arg(&out)
        .arg("--")
        .arg(&bin)
        .args(["mock-stdio", "--script"])
        .arg(root().join("tests/validate/broken/server.ping.toml"))
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicates::str::contains("html report: "));
    let index = out.join("index.html");
    let grid = grid(&dom(&url(&index, "")));
    let verdict = |id: &str| {
        let (_, cells) = grid
            .iter()
            .find(|(name, _)| name == id)
            .unwrap_or_else(|| panic!("no row {id} in {grid:?}"));
        cells
            .iter()
            .map(|(class, _)| class.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(verdict("server.ping"), ["fail"], "{grid:?}");
    assert_eq!(verdict("server.initialize.result"), ["pass"], "{grid:?}");
    let html = std::fs::read_to_string(&index).unwrap();
    let page = between(
        &html,
        "<td class=\"cell fail\" data-verdict=\"fail\"><a href=\"",
        "\"",
    );
    let failure = dom(&url(&out.join(page), ""));
    assert!(failure.contains("server.ping"), "{failure}");
    assert!(failure.contains("expected"), "{failure}");
    assert!(failure.contains("→ "), "the exchange sent: {failure}");
}
