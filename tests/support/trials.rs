//! The command line of a test binary of libtest-mimic trials that mostly wait (on servers,
//! on bounds) rather than compute.

use libtest_mimic::Arguments;

/// The arguments given, with `per_core` trials at once for each core unless
/// `--test-threads` says otherwise.
pub fn waiting_trials(per_core: usize) -> Arguments {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        args.test_threads = Some(cores * per_core);
    }
    args
}
