//! An SVG line chart of total CPU against the requested latency, one line per mode (the sweep
//! table as a picture). Hand-written SVG: no dependency, deterministic output for tests.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::{Mode, Summary};

const W: f64 = 640.0;
const H: f64 = 400.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

fn color(mode: Mode) -> &'static str {
    match mode {
        Mode::SrbchannelOn => "#1f77b4",
        Mode::SrbchannelOff => "#d62728",
        Mode::Socket => "#9467bd",
        Mode::Reference => "#7f7f7f",
    }
}

/// A "nice" upper bound for the y axis (1, 2, 2.5, 5 times a power of ten).
pub fn nice_ceiling(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= v {
            return m * p;
        }
    }
    10.0 * p
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Render the chart. Latencies are placed evenly (categorical x axis), since sweeps are usually
/// roughly logarithmic (5, 10, 20, 50, 100). Solid: total CPU; dashed: the server's share.
pub fn chart_svg(title: &str, summaries: &[Summary]) -> String {
    let mut latencies: Vec<u32> = summaries.iter().map(|s| s.latency_ms).collect();
    latencies.sort_unstable();
    latencies.dedup();
    let mut series: BTreeMap<Mode, Vec<(u32, f64, f64)>> = BTreeMap::new();
    for s in summaries {
        let server = s.columns.server_main.cpu_pct + s.columns.server_device.cpu_pct;
        series
            .entry(s.mode)
            .or_default()
            .push((s.latency_ms, s.columns.total.cpu_pct, server));
    }
    let max = summaries
        .iter()
        .map(|s| s.columns.total.cpu_pct)
        .fold(0.0, f64::max);
    let y_max = nice_ceiling(max);
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let x_of = |lat: u32| -> f64 {
        let i = latencies.iter().position(|&l| l == lat).unwrap_or(0) as f64;
        let n = latencies.len().max(2) as f64 - 1.0;
        if latencies.len() == 1 {
            LEFT + plot_w / 2.0
        } else {
            LEFT + plot_w * i / n
        }
    };
    let y_of = |v: f64| TOP + plot_h * (1.0 - (v / y_max).clamp(0.0, 1.0));

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="14" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        esc(title)
    );
    // Axes and grid.
    for i in 0..=5 {
        let v = y_max * f64::from(i) / 5.0;
        let y = y_of(v);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{v:.1}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0
        );
    }
    for &lat in &latencies {
        let x = x_of(lat);
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{lat}</text>"#,
            TOP + plot_h + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">requested latency (ms)</text>"#,
        LEFT + plot_w / 2.0,
        H - 10.0
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">CPU % of one core</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    let _ = writeln!(
        s,
        r#"<polyline points="{LEFT},{TOP} {LEFT},{:.1} {:.1},{:.1}" fill="none" stroke="black"/>"#,
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h
    );
    // Series.
    for (row, (mode, points)) in series.iter().enumerate() {
        let c = color(*mode);
        let total: Vec<String> = points
            .iter()
            .map(|&(l, v, _)| format!("{:.1},{:.1}", x_of(l), y_of(v)))
            .collect();
        let server: Vec<String> = points
            .iter()
            .map(|&(l, _, v)| format!("{:.1},{:.1}", x_of(l), y_of(v)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline class="total" points="{}" fill="none" stroke="{c}" stroke-width="2"/>"#,
            total.join(" ")
        );
        let _ = writeln!(
            s,
            r#"<polyline class="server" points="{}" fill="none" stroke="{c}" stroke-dasharray="4 3"/>"#,
            server.join(" ")
        );
        for &(l, v, _) in points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{} {l} ms: {v:.2} %</title></circle>"#,
                x_of(l),
                y_of(v),
                mode.label()
            );
        }
        let ly = TOP + 10.0 + 20.0 * row as f64;
        let lx = W - RIGHT + 15.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            lx + 20.0,
            lx + 26.0,
            ly + 4.0,
            esc(mode.label())
        );
    }
    let ly = TOP + 10.0 + 20.0 * series.len() as f64;
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}" fill="#555">solid: total, dashed: server</text>"##,
        W - RIGHT + 15.0,
        ly + 4.0
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::report::{Columns, Figures, SrbchannelState};

    fn summary(mode: Mode, latency_ms: u32, total: f64) -> Summary {
        let f = |cpu| Figures {
            cpu_pct: cpu,
            ..Figures::default()
        };
        Summary {
            mode,
            latency_ms,
            runs: 1,
            columns: Columns {
                client: f(total / 2.0),
                server_main: f(total / 4.0),
                server_device: f(total / 4.0),
                total: f(total),
            },
            granted_us: None,
            latency_us: None,
            srbchannel: SrbchannelState::Active,
            callbacks_per_s: None,
            cpu_saving_pct: None,
            wakeups_saving_pct: None,
            saving_note: None,
        }
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(0.7), 1.0);
        assert_eq!(nice_ceiling(1.5), 2.0);
        assert_eq!(nice_ceiling(2.2), 2.5);
        assert_eq!(nice_ceiling(15.9), 20.0);
        assert_eq!(nice_ceiling(50.0), 50.0);
    }

    #[test]
    fn one_line_per_mode_with_a_point_per_latency() {
        let s = vec![
            summary(Mode::SrbchannelOn, 5, 8.0),
            summary(Mode::SrbchannelOn, 10, 5.0),
            summary(Mode::SrbchannelOn, 100, 1.0),
            summary(Mode::SrbchannelOff, 5, 10.0),
            summary(Mode::SrbchannelOff, 10, 6.9),
            summary(Mode::SrbchannelOff, 100, 1.2),
        ];
        let svg = chart_svg("record <sweep>", &s);
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches(r#"class="total""#).count(), 2);
        assert_eq!(svg.matches(r#"class="server""#).count(), 2);
        assert_eq!(svg.matches("<circle").count(), 6);
        assert!(svg.contains("record &lt;sweep&gt;"));
        assert!(svg.contains(">100</text>"));
        // y axis tops at 10 %: the 10 % point sits on the top edge of the plot.
        assert!(svg.contains(&format!(r#"cy="{TOP:.1}""#)), "{svg}");
    }

    #[test]
    fn single_point_and_zero_values_do_not_break() {
        let svg = chart_svg("x", &[summary(Mode::Socket, 10, 0.0)]);
        assert!(svg.contains("<circle"));
        assert!(!svg.contains("NaN"));
        let empty = chart_svg("x", &[]);
        assert!(empty.contains("</svg>"));
    }
}
