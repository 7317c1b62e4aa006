//! Two rollouts of one task, aligned call by call (the paired comparison's side-by-side view).
//!
//! When one condition stays executable on a task and the other breaks, the question is *where*
//! the two runs part: the same calls up to some point, then one agent calls another tool, or the
//! same tool with other arguments, or the same call is rejected in one run only. A row-by-row
//! listing hides that as soon as one run makes one extra call; aligning the two call sequences
//! keeps equal calls on one row.
//!
//! The alignment is a global one (Needleman–Wunsch) over the calls, scored so that equal calls
//! attract each other most, calls of the same tool next, and two different calls still share a
//! row rather than open two gaps (a side-by-side view stays compact where the runs diverge):
//!
//! | pair of calls | score |
//! |---|---|
//! | same tool, same arguments | +4 |
//! | same tool, other arguments | +2 |
//! | other tools | 0 |
//! | a call on one side only (gap) | −1 |
//!
//! Ties are broken the same way every time (a pair before a call of A alone before a call of B
//! alone, from the end), so an alignment is a function of the two call lists. Past
//! [`MAX_CELLS`] the table would cost too much memory in a browser tab, and the calls are put
//! side by side by position instead ([`Alignment::by_position`]).

use crate::browse::StepView;

/// The largest `len(A) × len(B)` aligned by dynamic programming.
pub const MAX_CELLS: usize = 4_000_000;

const SAME: i32 = 4;
const SAME_TOOL: i32 = 2;
const OTHER: i32 = 0;
const GAP: i32 = -1;

/// How the two calls of a row relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// The same tool with the same arguments.
    Same,
    /// The same tool, other arguments.
    OtherArgs,
    /// Different tools.
    OtherTool,
    /// A call of A that B has no counterpart for.
    OnlyA,
    /// A call of B that A has no counterpart for.
    OnlyB,
}

/// One row: indices into A's and B's steps (at least one is present).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub a: Option<usize>,
    pub b: Option<usize>,
    pub kind: RowKind,
    /// The two runs differ here: not the same call, or the same call accepted in one run and
    /// rejected in the other.
    pub differs: bool,
}

/// Two call sequences side by side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    pub rows: Vec<Row>,
    /// The first row where the runs differ, if any.
    pub first_difference: Option<usize>,
    /// The rows holding A's and B's first rejected call (FED), if any.
    pub first_error_a: Option<usize>,
    pub first_error_b: Option<usize>,
    /// The sequences were too long to align and were put side by side by position.
    pub by_position: bool,
}

fn score(a: &StepView, b: &StepView) -> (i32, RowKind) {
    if a.tool != b.tool {
        (OTHER, RowKind::OtherTool)
    } else if a.args != b.args {
        (SAME_TOOL, RowKind::OtherArgs)
    } else {
        (SAME, RowKind::Same)
    }
}

fn row(a: &[StepView], b: &[StepView], i: Option<usize>, j: Option<usize>) -> Row {
    let kind = match (i, j) {
        (Some(i), Some(j)) => score(&a[i], &b[j]).1,
        (Some(_), None) => RowKind::OnlyA,
        _ => RowKind::OnlyB,
    };
    let differs = match (i, j) {
        (Some(i), Some(j)) => kind != RowKind::Same || a[i].executable != b[j].executable,
        _ => true,
    };
    Row {
        a: i,
        b: j,
        kind,
        differs,
    }
}

/// Aligns A's calls with B's; see the module documentation.
pub fn align(a: &[StepView], b: &[StepView]) -> Alignment {
    let (n, m) = (a.len(), b.len());
    let by_position = n.saturating_mul(m) > MAX_CELLS;
    let pairs = if by_position {
        (0..n.max(m))
            .map(|k| ((k < n).then_some(k), (k < m).then_some(k)))
            .collect()
    } else {
        needleman_wunsch(a, b)
    };
    let rows: Vec<Row> = pairs.into_iter().map(|(i, j)| row(a, b, i, j)).collect();
    let at = |pick: fn(&Row) -> Option<usize>, steps: &[StepView]| {
        rows.iter()
            .position(|r| pick(r).is_some_and(|k| steps[k].first_error))
    };
    Alignment {
        first_difference: rows.iter().position(|r| r.differs),
        first_error_a: at(|r| r.a, a),
        first_error_b: at(|r| r.b, b),
        rows,
        by_position,
    }
}

/// The optimal global alignment's pairs, in order.
fn needleman_wunsch(a: &[StepView], b: &[StepView]) -> Vec<(Option<usize>, Option<usize>)> {
    let (n, m) = (a.len(), b.len());
    let w = m + 1;
    // best[i * w + j]: the best score aligning a[i..] with b[j..] (suffixes, so that the walk
    // below goes forward and ties are broken from the start of the runs).
    let mut best = vec![0i32; (n + 1) * w];
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            best[i * w + j] = if i == n {
                GAP * (m - j) as i32
            } else if j == m {
                GAP * (n - i) as i32
            } else {
                let pair = score(&a[i], &b[j]).0 + best[(i + 1) * w + j + 1];
                let only_a = GAP + best[(i + 1) * w + j];
                let only_b = GAP + best[i * w + j + 1];
                pair.max(only_a).max(only_b)
            };
        }
    }
    let mut out = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        let here = best[i * w + j];
        if i < n && j < m && here == score(&a[i], &b[j]).0 + best[(i + 1) * w + j + 1] {
            out.push((Some(i), Some(j)));
            i += 1;
            j += 1;
        } else if i < n && (j == m || here == GAP + best[(i + 1) * w + j]) {
            out.push((Some(i), None));
            i += 1;
        } else {
            out.push((None, Some(j)));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps from "tool(args)" words; a trailing `!` marks a rejected call.
    fn steps(calls: &str) -> Vec<StepView> {
        let mut seen_error = false;
        calls
            .split_whitespace()
            .enumerate()
            .map(|(k, c)| {
                let rejected = c.ends_with('!');
                let c = c.trim_end_matches('!');
                let (tool, args) = c.split_once('(').unwrap_or((c, ")"));
                let first_error = rejected && !seen_error;
                let after = seen_error;
                seen_error |= rejected;
                StepView {
                    depth: k + 1,
                    tool: Some(tool.to_string()),
                    agent_tool: None,
                    args: Some(args.trim_end_matches(')').to_string()),
                    executable: !rejected,
                    error: None,
                    label: None,
                    reject_source: None,
                    first_error,
                    after_first_error: after,
                }
            })
            .collect()
    }

    fn shape(al: &Alignment) -> Vec<(Option<usize>, Option<usize>)> {
        al.rows.iter().map(|r| (r.a, r.b)).collect()
    }

    #[test]
    fn equal_runs_align_row_by_row_with_no_difference() {
        let a = steps("search(x) book(1)");
        let al = align(&a, &a);
        assert_eq!(shape(&al), vec![(Some(0), Some(0)), (Some(1), Some(1))]);
        assert_eq!(al.first_difference, None);
        assert!(al.rows.iter().all(|r| r.kind == RowKind::Same));
    }

    #[test]
    fn an_extra_call_opens_a_gap_and_the_rest_stays_aligned() {
        let a = steps("login() search(x) book(1)");
        let b = steps("login() lookup(y) search(x) book(1)");
        let al = align(&a, &b);
        assert_eq!(
            shape(&al),
            vec![
                (Some(0), Some(0)),
                (None, Some(1)),
                (Some(1), Some(2)),
                (Some(2), Some(3))
            ]
        );
        assert_eq!(al.rows[1].kind, RowKind::OnlyB);
        assert_eq!(al.first_difference, Some(1));
    }

    #[test]
    fn other_arguments_share_a_row_and_differ() {
        let a = steps("search(x) book(1)");
        let b = steps("search(x) book(2)!");
        let al = align(&a, &b);
        assert_eq!(shape(&al), vec![(Some(0), Some(0)), (Some(1), Some(1))]);
        assert_eq!(al.rows[1].kind, RowKind::OtherArgs);
        assert_eq!(al.first_difference, Some(1));
        assert_eq!((al.first_error_a, al.first_error_b), (None, Some(1)));
    }

    #[test]
    fn the_same_call_rejected_on_one_side_only_differs() {
        let a = steps("a() b(1)");
        let b = steps("a() b(1)!");
        let al = align(&a, &b);
        assert_eq!(al.rows[1].kind, RowKind::Same);
        assert!(al.rows[1].differs);
        assert_eq!(al.first_difference, Some(1));
    }

    #[test]
    fn diverging_runs_pair_different_tools_rather_than_two_gaps() {
        // 0 for a pair of other tools beats −2 for two gaps.
        let a = steps("x() y()");
        let b = steps("p() q()");
        let al = align(&a, &b);
        assert_eq!(shape(&al), vec![(Some(0), Some(0)), (Some(1), Some(1))]);
        assert!(al.rows.iter().all(|r| r.kind == RowKind::OtherTool));
        assert_eq!(al.first_difference, Some(0));
    }

    #[test]
    fn one_empty_side_is_all_gaps() {
        let a = steps("x() y()");
        let al = align(&a, &[]);
        assert_eq!(shape(&al), vec![(Some(0), None), (Some(1), None)]);
        assert_eq!(align(&[], &[]).rows, vec![]);
    }

    #[test]
    fn every_call_appears_once_in_order() {
        let a = steps("a() b() c(1) d() a() b()");
        let b = steps("b() c(2) a() e() b()");
        let al = align(&a, &b);
        let side = |pick: fn(&Row) -> Option<usize>| -> Vec<usize> {
            al.rows.iter().filter_map(pick).collect()
        };
        assert_eq!(side(|r| r.a), (0..a.len()).collect::<Vec<_>>());
        assert_eq!(side(|r| r.b), (0..b.len()).collect::<Vec<_>>());
    }

    #[test]
    fn too_long_to_align_goes_by_position() {
        let long = steps(&"t() ".repeat(2_001));
        let al = align(&long, &long[..2_000]);
        assert!(al.by_position);
        assert_eq!(al.rows.len(), 2_001);
        assert_eq!(al.rows[2_000], row(&long, &long, Some(2_000), None));
        assert_eq!(al.first_difference, Some(2_000));
    }

    proptest::proptest! {
        /// Whatever the calls: each side's calls appear once each, in order; a pair row holds
        /// two calls; the runs differ nowhere exactly when they make the same calls with the
        /// same verdicts.
        #[test]
        fn an_alignment_keeps_every_call_in_order(
            a in proptest::collection::vec((0u8..3, 0u8..2, proptest::bool::ANY), 0..12),
            b in proptest::collection::vec((0u8..3, 0u8..2, proptest::bool::ANY), 0..12),
        ) {
            let words = |v: &[(u8, u8, bool)]| v.iter()
                .map(|(t, x, bad)| format!("t{t}({x}){}", if *bad { "!" } else { "" }))
                .collect::<Vec<_>>().join(" ");
            let (sa, sb) = (steps(&words(&a)), steps(&words(&b)));
            let al = align(&sa, &sb);
            let side_a: Vec<usize> = al.rows.iter().filter_map(|r| r.a).collect();
            let side_b: Vec<usize> = al.rows.iter().filter_map(|r| r.b).collect();
            proptest::prop_assert_eq!(side_a, (0..a.len()).collect::<Vec<_>>());
            proptest::prop_assert_eq!(side_b, (0..b.len()).collect::<Vec<_>>());
            proptest::prop_assert!(al.rows.iter().all(|r| r.a.is_some() || r.b.is_some()));
            proptest::prop_assert_eq!(al.first_difference.is_none(), a == b);
        }
    }
}
