//! The summary of the proof table (`make prove`, docs/prove-table.md): how many proofs, the
//! sum of their seconds and the slowest one, computed from the table's rows so that the
//! sentence the table writer puts under the table and the one README.md quotes cannot drift
//! from the rows.

/// The cells of a Markdown table row, trimmed (the empty cells before the first `|` and after
/// the last one included).
fn cells(line: &str) -> Vec<&str> {
    line.split('|').map(str::trim).collect()
}

/// One proof row of the table: its description and seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `fma e4m3 rne satfinite` (unit, format, rounding, saturation; options when not `-`).
    pub label: String,
    /// The seconds column (wall time).
    pub seconds: f64,
    /// The `CPU s` column (fp8gen, yosys and the solver processes), when the row has it.
    pub cpu: Option<f64>,
}

/// The table's header row: the `CPU s` column, which rows measured before it was added have
/// empty, follows the wall seconds.
pub const HEADER: &str = "| unit | format | rounding | saturation | options | verdict | seconds | CPU s | SAT problem |\n|---|---|---|---|---|---|---|---|---|\n";

/// A row of a table written with the header before the `CPU s` column (eight cells) in the
/// current layout (an empty `CPU s` cell after the seconds); a current row as it is.
pub fn upgrade_row(line: &str) -> String {
    let c: Vec<&str> = line.split('|').collect();
    // `| a | … | h |` splits into 10 pieces for 8 cells (an empty piece at each end).
    if c.len() == 10 {
        let mut v = c[..8].to_vec();
        v.push(" ");
        v.extend_from_slice(&c[8..]);
        v.join("|")
    } else {
        line.to_string()
    }
}

/// The proof rows of a table (header `| unit | … | seconds | … |`, the seconds column found
/// by its header); rows without a number of seconds (errors) are left out.
pub fn rows(table: &str) -> Vec<Row> {
    let Some(header) = table.lines().find(|l| l.starts_with("| unit ")) else {
        return Vec::new();
    };
    let head = cells(header);
    let col = |name: &str| head.iter().position(|c| *c == name);
    let Some(sec) = col("seconds") else {
        return Vec::new();
    };
    let cpu = col("CPU s");
    let named: Vec<usize> = ["unit", "format", "rounding", "saturation", "options"]
        .iter()
        .filter_map(|n| col(n))
        .collect();
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| unit ") && !l.starts_with("|---"))
        .filter_map(|l| {
            let c = cells(l);
            let seconds = c.get(sec)?.parse::<f64>().ok()?;
            let label = named
                .iter()
                .filter_map(|&i| c.get(i).copied())
                .filter(|s| !s.is_empty() && *s != "-")
                .collect::<Vec<_>>()
                .join(" ");
            let cpu = cpu.and_then(|i| c.get(i)?.parse::<f64>().ok());
            Some(Row {
                label,
                seconds,
                cpu,
            })
        })
        .collect()
}

/// The sentence under the table and in README.md: `N proofs, S s in all (the sum of per-proof
/// wall times measured under load, not one run's wall time); the slowest: LABEL, T s.`,
/// followed, when rows have a `CPU s` cell, by `M rows with CPU time: C CPU s in all; the most:
/// LABEL, T CPU s.` (CPU time does not depend on the machine's load as wall time does).
pub fn summary(table: &str) -> Option<String> {
    let rows = rows(table);
    let slowest = rows.iter().max_by(|a, b| a.seconds.total_cmp(&b.seconds))?;
    let total: f64 = rows.iter().map(|r| r.seconds).sum();
    let mut s = format!(
        "{} proofs, {:.0} s in all (the sum of per-proof wall times measured under load, not one run's wall time); the slowest: {}, {:.1} s.",
        rows.len(),
        total,
        slowest.label,
        slowest.seconds
    );
    let timed: Vec<(&Row, f64)> = rows.iter().filter_map(|r| Some((r, r.cpu?))).collect();
    if let Some((most, t)) = timed.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        let cpu: f64 = timed.iter().map(|(_, c)| c).sum();
        s.push_str(&format!(
            " {} rows with CPU time: {:.0} CPU s in all; the most: {}, {:.1} CPU s.",
            timed.len(),
            cpu,
            most.label,
            t
        ));
    }
    Some(s)
}

/// Replaces the summary line (the one starting with `Whole table:`) of a table's text, or
/// adds it after the table.
pub fn with_summary(table: &str) -> String {
    let mut out: String = table
        .lines()
        .filter(|l| !l.starts_with(SUMMARY_PREFIX))
        .map(|l| format!("{l}\n"))
        .collect();
    while out.ends_with("\n\n") {
        out.pop();
    }
    if let Some(s) = summary(table) {
        out.push_str(&format!("\n{SUMMARY_PREFIX} {s}\n"));
    }
    out
}

/// The start of the summary line.
pub const SUMMARY_PREFIX: &str = "Whole table:";

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "Solver: x\n\n| unit | format | rounding | saturation | options | verdict | seconds | SAT problem |\n|---|---|---|---|---|---|---|---|\n\
| fma | e4m3 | rne | satfinite | - | **proven** | 185.7 | CNF |\n\
| mul | e4m3 | rne | satfinite | --ftz | **proven** | 2.3 | CNF |\n\
| add | e4m3 | rne | satnone | - | error: yosys | | |\n\
| fma | e4m3 | rne | satnone | - | **proven** | 1025.9 | CNF |\n";

    #[test]
    fn cpu_seconds_are_summed_where_rows_have_them() {
        let mut t = format!("Solver: x\n\n{HEADER}");
        for l in T
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| unit"))
        {
            t.push_str(&upgrade_row(l));
            t.push('\n');
        }
        t = t
            .replace("| 2.3 | |", "| 2.3 | 1.9 |")
            .replace("| 185.7 | |", "| 185.7 | 170.2 |");
        let r = rows(&t);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].cpu, r[1].cpu, r[2].cpu),
            (Some(170.2), Some(1.9), None)
        );
        assert!(
            summary(&t).unwrap().ends_with(
                "the slowest: fma e4m3 rne satnone, 1025.9 s. 2 rows with CPU time: 172 CPU s in all; the most: fma e4m3 rne satfinite, 170.2 CPU s."
            ),
            "{}",
            summary(&t).unwrap()
        );
        // A current row is left as it is; an error row gets its empty cell too.
        let up = upgrade_row("| add | e4m3 | rne | satnone | - | error: yosys | | |");
        assert_eq!(
            up,
            "| add | e4m3 | rne | satnone | - | error: yosys | | | |"
        );
        assert_eq!(upgrade_row(&up), up);
    }

    #[test]
    fn sums_the_seconds_column_and_names_the_slowest() {
        let r = rows(T);
        assert_eq!(r.len(), 3);
        assert_eq!(r[1].label, "mul e4m3 rne satfinite --ftz");
        assert_eq!(
            summary(T).unwrap(),
            "3 proofs, 1214 s in all (the sum of per-proof wall times measured under load, not one run's wall time); the slowest: fma e4m3 rne satnone, 1025.9 s."
        );
        assert_eq!(summary("no table"), None);
    }

    /// docs/prove-table.md ends with its summary and README.md quotes it: both follow the
    /// rows (after `make prove`, `prove_matrix --summary` rewrites the table's line; README's
    /// is edited by hand when this test says so).
    #[test]
    fn the_table_and_the_readme_state_the_rows_summary() {
        let table = include_str!("../../docs/prove-table.md");
        let readme = include_str!("../../README.md");
        let want = summary(table).expect("the table has rows");
        let line = format!("{SUMMARY_PREFIX} {want}");
        assert!(
            table.lines().any(|l| l == line),
            "docs/prove-table.md: want the line\n{line}"
        );
        let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&want), "README.md: want\n{want}");
    }

    #[test]
    fn the_summary_line_is_replaced_not_repeated() {
        let once = with_summary(T);
        assert!(once.ends_with("1025.9 s.\n"), "{once}");
        assert_eq!(with_summary(&once), once);
        let changed = with_summary(&once.replace("1025.9", "10.0"));
        assert!(changed.contains("the slowest: fma e4m3 rne satfinite, 185.7 s."));
        assert_eq!(changed.matches(SUMMARY_PREFIX).count(), 1);
    }
}
