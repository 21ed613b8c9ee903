//! Everything that is not one scenario: the invariants of the suite (tidy), the book and its
//! generated references, deliberately broken clients, leaks, memory, bad input and the command
//! line.

mod integration {
    pub mod support;

    mod bad_input;
    mod broken_clients;
    mod docs;
    mod docs_pages;
    mod layers;
    mod leaks;
    mod process_words;
    mod proofs;
    mod proofs_auth;
    mod redaction_property;
    mod tidy;
    mod wording;
}
