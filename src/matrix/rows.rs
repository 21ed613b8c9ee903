//! The matrix's rows: `adapters/matrix.toml`, one `[[row]]` a client under test, each a
//! driver command (see [`crate::cut::driver`]) and an optional build command.
//!
//! ```toml
//! [[row]]
//! name = "rmcp"                      # the column; its baseline is rmcp/baseline.toml
//! profile = "strict"                 # the driver's hello must claim it
//! build = "cargo build -p mcp-adapter-rmcp --bin rmcp-driver"
//! driver = "{target}/debug/rmcp-driver"
//! ```

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file of rows.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rows {
    /// The rows, in the order the matrix shows them.
    #[serde(default)]
    pub row: Vec<Row>,
}

/// One client under test.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The row's name: the matrix's column, and by default its baseline's folder
    /// (`adapters/<name>/baseline.toml`). Lowercase letters, digits and `-`.
    pub name: String,
    /// The profile the client is judged under (`strict`, `yoagent`, `kova`); the driver's
    /// hello must claim the same one.
    pub profile: String,
    /// The command that starts the driver, once per scenario, from the rows file's folder
    /// (`adapters/`).
    /// `{mcp-conformance}` stands for this program, `{target}` for cargo's target folder.
    pub driver: String,
    /// A command that builds the driver, run once from the rows file's folder before the
    /// matrix starts (skipped with `--no-build`); same placeholders as `driver`.
    #[serde(default)]
    pub build: Option<String>,
    /// The baseline of known failures, from the rows file's folder; by default
    /// `<name>/baseline.toml` (a missing file is an empty baseline).
    #[serde(default)]
    pub baseline: Option<PathBuf>,
    /// What the client is, in a few words (the matrix report shows it).
    #[serde(default)]
    pub about: String,
    /// The reference client: held to every scenario of its profile. Any other client is
    /// held to the specification and robustness rules and its own profile's promises (see
    /// [`crate::cut::sources`]): a scenario naming another profile's promise is not
    /// applicable to it.
    #[serde(default)]
    pub reference: bool,
}

/// Why the rows cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    /// The file cannot be read (not found, not a regular file, too large, not UTF-8).
    #[error("cannot read the rows {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: mcp_mock_servers::files::FileError,
    },
    /// The file is not valid TOML of rows.
    #[error("the rows {path} are not valid: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with the line.
        message: String,
    },
    /// A row is wrong (a bad name, a name twice, an unknown profile).
    #[error("the rows {path}: row `{row}`: {message}")]
    Row {
        /// The file.
        path: PathBuf,
        /// The row's name.
        row: String,
        /// What is wrong.
        message: String,
    },
}

impl Rows {
    /// Reads and checks the rows in `path`.
    pub fn load(path: &Path) -> Result<Rows, RowsError> {
        // The same checks as every other input: a FIFO or `/dev/zero` is refused at once.
        let text = mcp_mock_servers::files::read_text(path).map_err(|source| RowsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Rows::parse(&text, path)
    }

    /// Parses and checks rows read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Rows, RowsError> {
        use mcp_mock_servers::load::{toml_error, MAX_SCRIPT_DEPTH, MAX_SCRIPT_VALUES};
        mcp_mock_servers::weight::check_toml(text, MAX_SCRIPT_VALUES, MAX_SCRIPT_DEPTH).map_err(
            |heavy| RowsError::Parse {
                path: path.to_path_buf(),
                message: format!("too large to load: {heavy}"),
            },
        )?;
        let rows: Rows = toml::from_str(text).map_err(|e| RowsError::Parse {
            path: path.to_path_buf(),
            message: toml_error(text, &e),
        })?;
        let bad = |row: &Row, message: String| RowsError::Row {
            path: path.to_path_buf(),
            row: row.name.clone(),
            message,
        };
        for (i, row) in rows.row.iter().enumerate() {
            let well_named = !row.name.is_empty()
                && row
                    .name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !well_named {
                return Err(bad(
                    row,
                    "a name is lowercase letters, digits and `-`".into(),
                ));
            }
            if rows.row[..i].iter().any(|r| r.name == row.name) {
                return Err(bad(row, "the name is used by an earlier row".into()));
            }
            if mcp_refclient::Profile::from_name(&row.profile).is_none() {
                return Err(bad(
                    row,
                    format!(
                        "unknown profile `{}` (expected strict, yoagent or kova)",
                        row.profile
                    ),
                ));
            }
            if row.driver.trim().is_empty() {
                return Err(bad(row, "the driver command is empty".into()));
            }
        }
        Ok(rows)
    }
}

impl Row {
    /// The row's baseline file; `folder` is the rows file's folder.
    pub fn baseline_path(&self, folder: &Path) -> PathBuf {
        match &self.baseline {
            Some(path) => folder.join(path),
            None => folder.join(&self.name).join("baseline.toml"),
        }
    }
}

/// What the placeholders of a row's commands stand for.
#[derive(Clone, Debug)]
pub struct Placeholders {
    /// `{mcp-conformance}`: this program.
    pub program: PathBuf,
    /// `{target}`: cargo's target folder.
    pub target: PathBuf,
}

impl Placeholders {
    /// `command` with its placeholders replaced (each path quoted as one word).
    pub fn expand(&self, command: &str) -> String {
        let quote = |path: &Path| {
            shlex::try_quote(&path.to_string_lossy())
                .map(|q| q.into_owned())
                .unwrap_or_default()
        };
        command
            .replace("{mcp-conformance}", &quote(&self.program))
            .replace("{target}", &quote(&self.target))
    }

    /// This program, and the target folder it was built in (`CARGO_TARGET_DIR`, else the
    /// folder above the profile folder it runs from, else `root/target`).
    pub fn current(root: &Path) -> Placeholders {
        let program = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-conformance"));
        let target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => root.join(dir),
            None => program
                .parent()
                .and_then(|profile| {
                    if profile.ends_with("deps") {
                        profile.parent()
                    } else {
                        Some(profile)
                    }
                })
                .and_then(Path::parent)
                .filter(|dir| {
                    dir.file_name().is_some_and(|n| n == "target")
                        || dir.join("CACHEDIR.TAG").exists()
                })
                .map(Path::to_path_buf)
                .unwrap_or_else(|| root.join("target")),
        };
        Placeholders { program, target }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Rows, RowsError> {
        Rows::parse(text, Path::new("matrix.toml"))
    }

    #[test]
    fn a_row_names_its_driver_and_its_baseline_by_default() {
        let rows = parse("[[row]]\nname = \"rmcp\"\nprofile = \"strict\"\ndriver = \"{target}/debug/rmcp-driver\"\n").unwrap();
        assert_eq!(
            rows.row[0].baseline_path(Path::new("/repo/adapters")),
            Path::new("/repo/adapters/rmcp/baseline.toml")
        );
        let places = Placeholders {
            program: "/bin/mcp conf".into(),
            target: "/t".into(),
        };
        assert_eq!(places.expand(&rows.row[0].driver), "/t/debug/rmcp-driver");
        assert_eq!(
            places.expand("{mcp-conformance} driver"),
            "'/bin/mcp conf' driver"
        );
    }

    #[test]
    fn bad_rows_are_refused_with_the_row_named() {
        let unknown = parse("[[row]]\nname = \"x\"\nprofile = \"lenient\"\ndriver = \"d\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("row `x`: unknown profile `lenient`"),
            "{unknown}"
        );
        let twice = parse("[[row]]\nname = \"x\"\nprofile = \"kova\"\ndriver = \"d\"\n[[row]]\nname = \"x\"\nprofile = \"kova\"\ndriver = \"d\"\n");
        assert!(twice
            .unwrap_err()
            .to_string()
            .contains("used by an earlier row"));
        let field =
            parse("[[row]]\nname = \"x\"\nprofile = \"kova\"\ndriver = \"d\"\ncolour = 1\n")
                .unwrap_err()
                .to_string();
        assert!(
            field.contains("unknown field `colour`") && field.contains("line 5"),
            "{field}"
        );
        let upper = parse("[[row]]\nname = \"X y\"\nprofile = \"kova\"\ndriver = \"d\"\n")
            .unwrap_err()
            .to_string();
        assert!(upper.contains("lowercase letters"), "{upper}");
    }
}
