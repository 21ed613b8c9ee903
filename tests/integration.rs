//! Everything that is not one scenario: the invariants of the suite (tidy), deliberately
//! broken clients, leaks, memory, bad input and the command line.

mod integration {
    pub mod support;

    mod bad_input;
    mod broken_clients;
    mod layers;
    mod leaks;
    mod redaction_property;
    mod tidy;
}
