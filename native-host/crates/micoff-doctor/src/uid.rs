//! Who this process runs as: its real and effective user id. Below the facts (whose user the
//! doctor looks at) and the fixers (whether they need to escalate), which both ask.

pub fn current_uid() -> u32 {
    // SAFETY: getuid/geteuid cannot fail and touch no memory.
    unsafe { libc::getuid() }
}

pub fn current_euid() -> u32 {
    // SAFETY: as above.
    unsafe { libc::geteuid() }
}
