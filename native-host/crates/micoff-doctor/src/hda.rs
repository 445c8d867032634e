//! Intel HD-audio controllers on which `snd_hda_intel` reads the capture position through
//! `azx_get_pos_skl()` (the path with the `udelay(20)`), and the `position_fix` parameter.

/// PCI vendor id of Intel.
pub const INTEL_VENDOR: u16 = 0x8086;

/// Intel HD-audio controllers driven with `AZX_DRIVER_SKL` / `AZX_DCAPS_INTEL_SKYLAKE` in the
/// kernel's `azx_ids[]` table, sound/pci/hda/hda_intel.c (v5.15 .. v6.x; the file moved to
/// sound/hda/controllers/intel.c in 6.16). Those get `POS_FIX_SKL` and `azx_get_pos_skl()` by
/// default. Keep this the only copy of the list.
pub const SKYLAKE_PLUS: &[(u16, &str)] = &[
    (0xa170, "Sunrise Point (Skylake)"),
    (0x9d70, "Sunrise Point-LP (Skylake)"),
    (0xa171, "Kaby Lake"),
    (0x9d71, "Kaby Lake-LP"),
    (0xa2f0, "Kaby Lake-H"),
    (0xa348, "Coffee Lake"),
    (0x9dc8, "Cannon Lake"),
    (0x02c8, "Comet Lake-LP"),
    (0x06c8, "Comet Lake-H"),
    (0xf1c8, "Comet Lake-H"),
    (0xa3f0, "Comet Lake-S"),
    (0xf0c8, "Comet Lake-R"),
    (0x34c8, "Ice Lake"),
    (0x3dc8, "Ice Lake-H"),
    (0x38c8, "Jasper Lake"),
    (0x4dc8, "Jasper Lake"),
    (0xa0c8, "Tiger Lake"),
    (0x43c8, "Tiger Lake-H"),
    (0x490d, "DG1"),
    (0x4f90, "DG2"),
    (0x4f91, "DG2"),
    (0x4f92, "DG2"),
    (0x4b55, "Elkhart Lake"),
    (0x4b58, "Elkhart Lake"),
    (0x7ad0, "Alder Lake-S"),
    (0x51c8, "Alder Lake-P"),
    (0x51c9, "Alder Lake-PS"),
    (0x51cd, "Alder Lake-PS"),
    (0x51cc, "Alder Lake-M"),
    (0x54c8, "Alder Lake-N"),
    (0x7a50, "Raptor Lake"),
    (0x51ca, "Raptor Lake-P"),
    (0x51cb, "Raptor Lake-P"),
    (0x51ce, "Raptor Lake-M"),
    (0x51cf, "Raptor Lake-PX"),
    (0x7e28, "Meteor Lake-P"),
    (0xa828, "Lunar Lake-P"),
    (0x5a98, "Broxton-P (Apollo Lake)"),
    (0x1a98, "Broxton-T"),
    (0x3198, "Gemini Lake"),
];

/// Name of a Skylake-or-later Intel controller, `None` for anything else.
pub fn skylake_plus_name(vendor: u16, device: u16) -> Option<&'static str> {
    if vendor != INTEL_VENDOR {
        return None;
    }
    SKYLAKE_PLUS
        .iter()
        .find(|(id, _)| *id == device)
        .map(|(_, name)| *name)
}

/// `0x8086` -> 0x8086.
pub fn parse_hex_id(s: &str) -> Option<u16> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u16::from_str_radix(s, 16).ok()
}

/// `/sys/module/snd_hda_intel/parameters/position_fix` (`-1,-1,1,...`, one per possible
/// controller).
pub fn parse_int_array(s: &str) -> Vec<i32> {
    s.trim()
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

/// What a `position_fix` value means (Documentation/sound/hd-audio/notes.rst).
pub fn position_fix_name(v: i32) -> &'static str {
    match v {
        -1 => "default",
        0 => "auto",
        1 => "LPIB",
        2 => "POSBUF",
        3 => "VIACOMBO",
        4 => "COMBO",
        5 => "SKL+",
        6 => "FIFO",
        _ => "unknown",
    }
}

/// The `position_fix` value for snd_hda_intel's controller `dev`, given an array (the live one or
/// a modprobe.d one).
///
/// The array is NOT indexed by the ALSA card number: `azx_probe()` keeps its own counter (`static
/// int dev`) of the PCI devices snd_hda_intel has probed and reads `position_fix[dev]`, so entry n
/// is the n-th controller driven by snd_hda_intel (see [`crate::facts::Card::hda_dev`]).
pub fn position_fix_for(values: &[i32], dev: u32) -> i32 {
    values.get(dev as usize).copied().unwrap_or(-1)
}

/// Whether a `position_fix` value keeps the capture position away from `azx_get_pos_skl()` (the
/// path with the `udelay(20)`) on a Skylake+ controller. `assign_position_fix()` maps each value
/// to a callback: 0 auto (position buffer with an LPIB fallback), 1 LPIB, 2 POSBUF, 3 VIACOMBO,
/// 4 COMBO and 6 FIFO never call it; 5 (SKL+) does, and so does -1 (and any value the driver does
/// not know), which `check_position_fix()` turns into `POS_FIX_SKL` on Skylake+.
pub fn bypasses_skl_udelay(v: i32) -> bool {
    matches!(v, 0..=4 | 6)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn table_lookups() {
        assert_eq!(skylake_plus_name(0x8086, 0x9d71), Some("Kaby Lake-LP"));
        assert_eq!(
            skylake_plus_name(0x8086, 0xa170),
            Some("Sunrise Point (Skylake)")
        );
        assert_eq!(skylake_plus_name(0x8086, 0x02c8), Some("Comet Lake-LP"));
        // Haswell HDMI: Intel, but not Skylake+.
        assert_eq!(skylake_plus_name(0x8086, 0x0a0c), None);
        // AMD with a colliding id.
        assert_eq!(skylake_plus_name(0x1022, 0x9d71), None);
        let mut ids: Vec<u16> = SKYLAKE_PLUS.iter().map(|(i, _)| *i).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SKYLAKE_PLUS.len(), "duplicate id in the table");
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_hex_id("0x8086\n"), Some(0x8086));
        assert_eq!(parse_hex_id("9d71"), Some(0x9d71));
        assert_eq!(parse_hex_id("zz"), None);
        assert_eq!(parse_int_array("-1,1,-1\n"), vec![-1, 1, -1]);
        assert_eq!(position_fix_for(&[-1, 1], 1), 1);
        assert_eq!(position_fix_for(&[-1, 1], 7), -1);
        assert_eq!(position_fix_name(1), "LPIB");
    }

    #[test]
    fn which_values_bypass_the_udelay() {
        let cases = [
            (-1, false),
            (0, true),
            (1, true),
            (2, true),
            (3, true),
            (4, true),
            (5, false),
            (6, true),
            (7, false),
            (-2, false),
        ];
        for (v, want) in cases {
            assert_eq!(bypasses_skl_udelay(v), want, "position_fix={v}");
        }
    }
}
