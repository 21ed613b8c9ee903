//! The `matrix` command: every row's client through the scenarios, as a table and a report.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use mcp_conformance::{error_chain, exit_code, report};

use crate::{emit, fail, load, prepare, write_html, MatrixArgs};

use super::signals::{end_escaped_descendants, INTERRUPTED};

pub(crate) fn matrix(args: MatrixArgs) -> ExitCode {
    use mcp_conformance::matrix::{
        render,
        rows::{Placeholders, Rows},
        run,
    };
    let mut rows = match Rows::load(&args.rows) {
        Ok(rows) => rows,
        Err(e) => {
            fail(&error_chain(&e));
            return ExitCode::from(exit_code::USAGE);
        }
    };
    if let Some(unknown) = args
        .only
        .iter()
        .find(|name| !rows.row.iter().any(|r| &r.name == *name))
    {
        fail(&format!("no row `{unknown}` in {}", args.rows.display()));
        return ExitCode::from(exit_code::USAGE);
    }
    if !args.only.is_empty() {
        rows.row.retain(|r| args.only.contains(&r.name));
    }
    let (selected, launcher) = match prepare(&args.scenarios, args.prefix.as_deref(), None) {
        Ok(prepared) => prepared,
        Err(code) => return code,
    };
    // A prefix run still checks each baseline against every scenario it may name.
    let every_scenario = match args.prefix {
        Some(_) => match load(&args.scenarios) {
            Ok(all) => all,
            Err(code) => return code,
        },
        None => Vec::new(),
    };
    let folder = run::folder_of(&args.rows);
    let options = run::Options {
        every_scenario,
        placeholders: Placeholders::current(folder.parent().unwrap_or(&folder)),
        folder,
        build: !args.no_build,
        build_timeout: Duration::from_secs(args.build_timeout_s),
        step_guard: Duration::from_millis(args.step_guard_ms),
        hello_within: Duration::from_millis(args.step_guard_ms),
        workers: args
            .jobs
            .unwrap_or(mcp_conformance::runner::RunOptions::default().workers),
        reuse: !args.fresh_drivers,
    };
    let matrix = run::check_baselines(&rows, &selected, &options)
        .and_then(|()| run::build(&rows, &options))
        .and_then(|()| run::run(&rows, &selected, &launcher, &options));
    end_escaped_descendants();
    let matrix = match matrix {
        Ok(matrix) => matrix,
        Err(e) => {
            fail(&error_chain(&e));
            return ExitCode::from(if e.is_usage() {
                exit_code::USAGE
            } else {
                exit_code::HARNESS_FAULT
            });
        }
    };
    while INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::park();
    }
    let to_stdout = |path: &Option<PathBuf>| path.as_deref().is_some_and(|p| p == Path::new("-"));
    if !to_stdout(&args.json) && !to_stdout(&args.markdown) {
        if let Err(code) = emit(&render::text(&matrix)) {
            return code;
        }
    }
    for (path, text) in [
        (&args.json, render::json(&matrix)),
        (&args.markdown, render::markdown(&matrix)),
    ] {
        let Some(path) = path else { continue };
        let written = if path == Path::new("-") {
            emit(&text)
        } else {
            std::fs::write(path, text).map_err(|e| {
                fail(&format!("cannot write {}: {e}", path.display()));
                ExitCode::from(exit_code::HARNESS_FAULT)
            })
        };
        if let Err(code) = written {
            return code;
        }
    }
    if let Some(dir) = &args.html {
        let html = report::html::fill::from_matrix("mcp-conformance matrix", &matrix, &selected);
        if let Err(why) = write_html(dir, &html) {
            fail(&why);
            return ExitCode::from(exit_code::HARNESS_FAULT);
        }
    }
    let marks = matrix
        .columns
        .iter()
        .flat_map(|c| c.cells.iter().map(|cell| cell.mark));
    let counts = render::Counts::of(marks);
    ExitCode::from(if counts.harness_faults > 0 {
        exit_code::HARNESS_FAULT
    } else if counts.fail + counts.stale > 0 {
        exit_code::FAILURES
    } else {
        exit_code::SUCCESS
    })
}
