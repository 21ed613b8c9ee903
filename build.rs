//! Rebuilds the tests when a case file is added: the validator's broken-server tests are one
//! rstest case per file (`#[files]` globs at compile time).

fn main() {
    for folder in [
        "tests/validate/broken",
        "tests/validate/broken-http",
        "tests/validate/broken-2026",
        "tests/validate/broken-2026-http",
        "tests/validate/correct",
        "tests/validate/correct-http",
        "tests/validate/broken-auth-tokens",
        "tests/validate/correct-auth-tokens",
        "tests/validate/broken-authorization-server",
        "tests/validate/correct-authorization-server",
    ] {
        println!("cargo:rerun-if-changed={folder}");
    }
}
