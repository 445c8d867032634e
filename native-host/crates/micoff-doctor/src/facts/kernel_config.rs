//! The kernel build options the doctor looks at, from /boot/config-<release> or /proc/config.gz.

use std::collections::BTreeMap;
use std::io::Read;

use crate::parse;
use crate::root::Root;

const CONFIG_KEYS: &[&str] = &[
    "CONFIG_HIGH_RES_TIMERS",
    "CONFIG_NO_HZ",
    "CONFIG_NO_HZ_IDLE",
    "CONFIG_NO_HZ_FULL",
    "CONFIG_PREEMPT_RT",
    "CONFIG_PREEMPT",
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT_DYNAMIC",
    "CONFIG_HZ",
    "CONFIG_IRQ_FORCED_THREADING",
];

pub(crate) fn read_config(
    root: &Root,
    release: &str,
) -> (Option<BTreeMap<String, String>>, Option<String>) {
    let mut candidates = vec![format!("/boot/config-{release}")];
    candidates.push("/proc/config.gz".into());
    for path in candidates {
        let Ok(bytes) = root.read_bytes(&path) else {
            continue;
        };
        let text = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut s = String::new();
            if flate2::read::GzDecoder::new(&bytes[..])
                .read_to_string(&mut s)
                .is_err()
            {
                continue;
            }
            s
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let all = parse::kernel_config(&text);
        let picked = all
            .into_iter()
            .filter(|(k, _)| CONFIG_KEYS.contains(&k.as_str()))
            .collect();
        return (Some(picked), Some(path));
    }
    (None, None)
}
