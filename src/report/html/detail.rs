//! A cell's page: the rules with their quoted requirement and source, the server's script in
//! short, each expectation that did not hold (expected and observed side by side), the
//! client's steps with what each returned and when, the wire transcript, the client's log,
//! and for a baselined failure the baseline's reason and evidence.

use super::escape::text;
use super::model::{Cell, Column, Detail, Row, Tone};
use std::fmt::Write;

/// Renders the page of `row` × `column` (it sits in `cells/`, one level below the index).
pub fn render(title: &str, row: &Row, column: &Column, cell: &Cell) -> String {
    let detail = &cell.detail;
    let mut out = String::new();
    let name = text(&row.name);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{name} · {} · {}</title>\n\
         <link rel=\"stylesheet\" href=\"../style.css\">\n</head>\n<body>\n\
         <p><a href=\"../index.html\">← {}</a></p>\n<h1>{name}</h1>\n\
         <p><span class=\"badge {}\" id=\"verdict\">{}</span> {} — {} — {} ms</p>\n",
        text(&column.name),
        cell.verdict.word(),
        text(title),
        cell.verdict.class(),
        cell.verdict.word(),
        text(&column.name),
        text(&column.about),
        detail.millis
    );
    rules(&mut out, detail);
    expectations(&mut out, cell.verdict, detail);
    if let Some(known) = &detail.known {
        let _ = write!(
            out,
            "<section id=\"known\">\n<h2>Baseline entry</h2>\n<p>{}</p>\n</section>\n",
            text(known)
        );
    }
    if !detail.script.is_empty() {
        out.push_str("<section id=\"script\">\n<h2>Server script</h2>\n<ol class=\"mono\">");
        for step in &detail.script {
            let _ = write!(out, "<li>{}</li>", text(step));
        }
        out.push_str("</ol>\n</section>\n");
    }
    steps(&mut out, detail);
    if let Some(transcript) = &detail.transcript {
        let _ = write!(
            out,
            "<section id=\"wire\">\n<h2>Wire transcript</h2>\n\
             <p>What the server received (→) and sent (←), in the order it saw them; for a scenario, then the client's step results, its warnings and the processes left.</p>\n\
             <pre class=\"transcript\">{}</pre>\n</section>\n",
            text(transcript)
        );
    }
    if !detail.log.is_empty() {
        let mut log = detail.log.join("\n");
        if detail.log_left_out > 0 {
            let _ = write!(log, "\n… {} more line(s) left out", detail.log_left_out);
        }
        let _ = write!(
            out,
            "<section id=\"log\">\n<h2>Client log</h2>\n<pre class=\"log\">{}</pre>\n</section>\n",
            text(&log)
        );
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn rules(out: &mut String, detail: &Detail) {
    out.push_str("<section id=\"rules\">\n<h2>Rules</h2>\n");
    if !detail.requirement.is_empty() {
        let _ = write!(
            out,
            "<p>The requirement:</p>\n<blockquote class=\"requirement\">{}</blockquote>\n",
            text(&detail.requirement)
        );
    }
    for rule in &detail.rules {
        let sources = if rule.sources.is_empty() {
            String::new()
        } else {
            format!(
                "<p class=\"rules\">source: {}</p>",
                text(&rule.sources.join(", "))
            )
        };
        let _ = writeln!(
            out,
            "<div class=\"rule\"><p><code>{}</code> ({})</p><blockquote>{}</blockquote>{sources}</div>",
            text(&rule.id),
            text(&rule.level),
            text(&rule.text)
        );
    }
    out.push_str("</section>\n");
}

fn expectations(out: &mut String, verdict: Tone, detail: &Detail) {
    out.push_str("<section id=\"expectations\">\n<h2>Expectations</h2>\n");
    if let Some(reason) = &detail.reason {
        let what = match verdict {
            Tone::HarnessFault => "The harness failed (this says nothing about the client)",
            _ => "Not applicable",
        };
        let _ = writeln!(
            out,
            "<p>{what}: <span class=\"reason\">{}</span></p>",
            text(reason)
        );
    }
    if detail.mismatches.is_empty() && detail.reason.is_none() {
        out.push_str("<p>Every expectation held.</p>\n");
    }
    if !detail.mismatches.is_empty() {
        out.push_str(
            "<table class=\"side-by-side\">\n<thead><tr><th>expectation</th><th>expected</th><th>observed</th></tr></thead>\n<tbody>\n",
        );
        for m in &detail.mismatches {
            let _ = writeln!(
                out,
                "<tr class=\"mismatch\"><th>{}</th><td class=\"expected\">{}</td><td class=\"observed\">{}</td></tr>",
                text(&m.what),
                text(&m.expected),
                text(&m.observed)
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</section>\n");
}

fn steps(out: &mut String, detail: &Detail) {
    if detail.steps.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"steps\">\n<h2>Client steps</h2>\n<table class=\"steps\">\n\
         <thead><tr><th>#</th><th>step</th><th>result</th><th>returned</th><th>ms</th></tr></thead>\n<tbody>\n",
    );
    for step in &detail.steps {
        let (class, result) = if step.ok {
            ("ok", "ok")
        } else {
            ("error", "error")
        };
        let _ = writeln!(
            out,
            "<tr class=\"{class}\"><td>{}</td><td class=\"mono\">{}</td><td class=\"result\">{result}</td><td class=\"returned mono\">{}</td><td>{}</td></tr>",
            step.number,
            text(&step.label),
            text(&step.returned),
            step.millis
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}
