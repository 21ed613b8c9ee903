//! The HTML report: a static folder (`index.html`, `style.css`, `filter.js` and a page per
//! cell under `cells/`) that opens from `file://` with no network. The grid of rows × columns
//! is coloured by verdict and filtered by area, verdict and rule id; each cell's page shows
//! the rules, the expectations, the steps, the wire transcript and the log.
//!
//! The pages are rendered from the neutral [`model::Report`]; [`fill`] builds it from what
//! `run` and `matrix` judged. Every text goes through [`escape::text`], and what a run
//! handed the client as a secret is redacted before it reaches the model.

pub mod assets;
pub mod detail;
pub mod escape;
pub mod fill;
pub mod fill_validate;
pub mod index;
pub mod model;

use std::path::{Path, PathBuf};

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Files written.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// Why the report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// A file or folder could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes `report` into `dir` (made if missing). A `cells/` folder already there is
/// replaced, so no page of an earlier report stays behind.
pub fn write(dir: &Path, report: &model::Report) -> Result<Written, HtmlError> {
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HtmlError::Write { path, source }
    };
    let cells = dir.join("cells");
    if cells.is_dir() {
        std::fs::remove_dir_all(&cells).map_err(failed(&cells))?;
    }
    std::fs::create_dir_all(&cells).map_err(failed(&cells))?;
    let mut written = Written::default();
    let mut put = |path: PathBuf, text: String| {
        std::fs::write(&path, &text).map_err(failed(&path))?;
        written.files += 1;
        written.bytes += text.len() as u64;
        Ok::<(), HtmlError>(())
    };
    put(dir.join("index.html"), index::render(report))?;
    put(dir.join("style.css"), assets::STYLE.to_string())?;
    put(dir.join("filter.js"), assets::FILTER.to_string())?;
    let mut number = 0;
    for area in &report.areas {
        for row in &area.rows {
            for (c, (cell, column)) in row.cells.iter().zip(&report.columns).enumerate() {
                if let Some(cell) = cell {
                    let page = detail::render(&report.title, row, column, cell);
                    put(dir.join(index::cell_page(number, c)), page)?;
                }
            }
            number += 1;
        }
    }
    Ok(written)
}
