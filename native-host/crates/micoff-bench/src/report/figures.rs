//! The seeds' columns: per-thread rates summed into client, server main thread, server device
//! thread(s) and total ([`Columns`] of [`Figures`]).

use serde::{Deserialize, Serialize};

use crate::sample::ThreadRates;

/// Summed rates of a group of threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub cpu_pct: f64,
    pub wakeups_per_s: f64,
    pub read_syscalls_per_s: f64,
    pub write_syscalls_per_s: f64,
}

impl Figures {
    pub fn sum<'a>(threads: impl IntoIterator<Item = &'a ThreadRates>) -> Self {
        threads
            .into_iter()
            .fold(Figures::default(), |acc, t| Figures {
                cpu_pct: acc.cpu_pct + t.cpu_pct,
                wakeups_per_s: acc.wakeups_per_s + t.wakeups_per_s,
                read_syscalls_per_s: acc.read_syscalls_per_s + t.read_syscalls_per_s,
                write_syscalls_per_s: acc.write_syscalls_per_s + t.write_syscalls_per_s,
            })
    }

    pub fn plus(self, o: Figures) -> Figures {
        Figures {
            cpu_pct: self.cpu_pct + o.cpu_pct,
            wakeups_per_s: self.wakeups_per_s + o.wakeups_per_s,
            read_syscalls_per_s: self.read_syscalls_per_s + o.read_syscalls_per_s,
            write_syscalls_per_s: self.write_syscalls_per_s + o.write_syscalls_per_s,
        }
    }
}

/// The seeds' columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Columns {
    pub client: Figures,
    pub server_main: Figures,
    pub server_device: Figures,
    pub total: Figures,
}

impl Columns {
    /// Group per-thread rates: all client threads; the server's main thread is the one whose tid
    /// is the server's pid, every other server thread counts as device (I/O) thread.
    pub fn from_threads(client: &[ThreadRates], server: &[ThreadRates], server_pid: u32) -> Self {
        let client = Figures::sum(client);
        let server_main = Figures::sum(server.iter().filter(|t| t.tid == server_pid));
        let server_device = Figures::sum(server.iter().filter(|t| t.tid != server_pid));
        Columns {
            client,
            server_main,
            server_device,
            total: client.plus(server_main).plus(server_device),
        }
    }
}
