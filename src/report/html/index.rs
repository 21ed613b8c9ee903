//! `index.html`: the grid, row × column grouped by area and coloured by verdict, with counts
//! per column and per area, and the filters.

use super::escape::text;
use super::model::{Area, Report, Tone};
use std::fmt::Write;

/// The page of a cell: `cells/<row>-<column>.html`, rows numbered across areas.
pub fn cell_page(row: usize, column: usize) -> String {
    format!("cells/{row}-{column}.html")
}

/// Renders `index.html`.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let title = text(&report.title);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
         <link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    out.push_str("<p class=\"legend\">");
    for tone in Tone::ALL {
        let _ = write!(
            out,
            "<span class=\"badge {}\">{}</span>",
            tone.class(),
            tone.word()
        );
    }
    out.push_str(
        "<span class=\"badge notrun\">-</span> not run (not of the column's profile)</p>\n",
    );
    summary(&mut out, report);
    filters(&mut out, report);
    grid(&mut out, report);
    out.push_str("<script src=\"filter.js\"></script>\n</body>\n</html>\n");
    out
}

fn tones<'a>(areas: impl Iterator<Item = &'a Area>, column: usize) -> Vec<Tone> {
    areas
        .flat_map(|a| &a.rows)
        .filter_map(|row| row.cells.get(column).and_then(|c| c.as_ref()))
        .map(|c| c.verdict)
        .collect()
}

/// Counts per column: a line per column, a count per verdict.
fn summary(out: &mut String, report: &Report) {
    out.push_str("<table class=\"summary\">\n<thead><tr><th>column</th><th>client</th>");
    for tone in Tone::ALL {
        let _ = write!(out, "<th class=\"{}\">{}</th>", tone.class(), tone.word());
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (c, column) in report.columns.iter().enumerate() {
        let tones = tones(report.areas.iter(), c);
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td>",
            text(&column.name),
            text(&column.about)
        );
        for tone in Tone::ALL {
            let count = tones.iter().filter(|t| **t == tone).count();
            let _ = write!(out, "<td data-verdict=\"{}\">{count}</td>", tone.class());
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn filters(out: &mut String, report: &Report) {
    out.push_str("<form id=\"filters\" onsubmit=\"return false\">\n<label>area <select id=\"f-area\"><option value=\"\">all</option>");
    for area in &report.areas {
        let name = text(&area.name);
        let _ = write!(out, "<option value=\"{name}\">{name}</option>");
    }
    out.push_str("</select></label>\n<label>verdict <select id=\"f-verdict\"><option value=\"\">all</option>");
    for tone in Tone::ALL {
        let _ = write!(
            out,
            "<option value=\"{}\">{}</option>",
            tone.class(),
            tone.word()
        );
    }
    out.push_str(
        "</select></label>\n<label>rule id <input id=\"f-rule\" placeholder=\"stdio.ping\" size=\"28\"></label>\n\
         <span><span id=\"shown\"></span> row(s) shown</span>\n</form>\n",
    );
}

fn grid(out: &mut String, report: &Report) {
    out.push_str("<table class=\"grid\" id=\"grid\">\n<thead><tr><th>scenario</th>");
    for column in &report.columns {
        let _ = write!(
            out,
            "<th title=\"{}\">{}</th>",
            text(&column.about),
            text(&column.name)
        );
    }
    out.push_str("</tr></thead>\n");
    let mut number = 0;
    for area in &report.areas {
        let name = text(&area.name);
        let _ = write!(
            out,
            "<tbody class=\"area\" data-area=\"{name}\">\n<tr class=\"area-head\"><th>{name}</th>"
        );
        for c in 0..report.columns.len() {
            // Passed of judged: a not-applicable or harness cell judged nothing.
            let tones = tones(std::iter::once(area), c);
            let judged = tones
                .iter()
                .filter(|t| !matches!(t, Tone::NotApplicable | Tone::HarnessFault))
                .count();
            let passed = tones.iter().filter(|t| **t == Tone::Pass).count();
            let _ = write!(out, "<td>{passed}/{judged}</td>");
        }
        out.push_str("</tr>\n");
        for row in &area.rows {
            let ids: Vec<&str> = row.rules.iter().map(|(id, _)| id.as_str()).collect();
            let shown: Vec<String> = row
                .rules
                .iter()
                .map(|(id, level)| format!("{} ({})", text(id), text(level)))
                .collect();
            let _ = write!(
                out,
                "<tr class=\"scenario\" data-area=\"{name}\" data-rules=\"{}\"><th class=\"name\">{}<br><span class=\"rules\">{}</span></th>",
                text(&ids.join(" ")),
                text(&row.name),
                shown.join(", ")
            );
            for (c, cell) in row.cells.iter().enumerate() {
                match cell {
                    Some(cell) => {
                        let _ = write!(
                            out,
                            "<td class=\"cell {class}\" data-verdict=\"{class}\"><a href=\"{}\">{}</a></td>",
                            cell_page(number, c),
                            cell.verdict.word(),
                            class = cell.verdict.class()
                        );
                    }
                    None => {
                        out.push_str("<td class=\"cell notrun\" data-verdict=\"notrun\">-</td>")
                    }
                }
            }
            out.push_str("</tr>\n");
            number += 1;
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table>\n");
}
