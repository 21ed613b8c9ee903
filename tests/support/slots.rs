//! A counting semaphore for test binaries whose trials run parts side by side.

/// A counting semaphore: at most so many runs at once, whichever trial they belong to (a
/// trial that runs its parts side by side takes a slot per part).
pub struct Slots {
    free: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Slots {
    /// `per_core` slots for each core.
    pub fn per_core(per_core: usize) -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        Slots {
            free: std::sync::Mutex::new(cores * per_core),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Runs `work` once a slot is free, and frees it after.
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            while *free == 0 {
                free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
            }
            *free -= 1;
        }
        // Freed however `work` ends, a panic included.
        struct Release<'a>(&'a Slots);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                self.0.freed.notify_one();
            }
        }
        let _release = Release(self);
        work()
    }
}
