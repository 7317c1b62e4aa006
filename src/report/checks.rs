//! The exact identities of the paper, checked on every report.
//!
//! On valid input they hold by construction; a violation means a bug in this program or a
//! corrupted report, so each one is listed, never hidden.

use super::{ConditionReport, Violation};
use crate::stats::IDENTITY_TOLERANCE;

/// Checks, per condition: `0 ≤ TER ≤ AUC-PEC ≤ 1`; `RR-Eligible = N(1 − TER)`; the five label
/// counts + environment + unlabeled sum to RR-Eligible (and so do the label sources, when
/// reported); PEC non-increasing in k and in [0, 1]; `0 ≤ PEC_elig ≤ 1`; eq. 7
/// `PEC(k) = (n_k/N)·PEC_elig(k)` where `n_k > 0`; eq. 12 `P(Y) = q·s + (1 − q)·r` for
/// `0 < q < 1`; every interval ordered.
pub fn check_identities(conditions: &[ConditionReport]) -> Vec<Violation> {
    let mut out = Vec::new();
    for c in conditions {
        let mut fail = |identity: &str, detail: String| {
            out.push(Violation {
                dataset: c.dataset.clone(),
                model: c.model.clone(),
                method: c.method.clone(),
                identity: identity.to_string(),
                detail,
            })
        };
        let n = c.n as f64;
        let ter = c.ter.value.unwrap_or(f64::NAN);
        let auc = c.auc_pec.value.unwrap_or(f64::NAN);
        if !(0.0 <= ter && ter <= auc && auc <= 1.0) {
            fail(
                "0 <= TER <= AUC-PEC <= 1",
                format!("TER {ter}, AUC-PEC {auc}"),
            );
        }
        if c.rr_eligible + c.fully_executable != c.n {
            fail(
                "RR-Eligible = N(1 - TER)",
                format!(
                    "RR-Eligible {}, N {}, fully executable {}",
                    c.rr_eligible, c.n, c.fully_executable
                ),
            );
        }
        let labels: u64 = c.first_failure_labels.entries().iter().map(|e| e.1).sum();
        if labels != c.rr_eligible {
            fail(
                "first-failure labels sum to RR-Eligible",
                format!("labels {labels}, RR-Eligible {}", c.rr_eligible),
            );
        }
        if let Some(sources) = &c.first_failure_label_sources {
            let total: u64 = sources.values().sum();
            if total != c.rr_eligible {
                fail(
                    "first-failure label sources sum to RR-Eligible",
                    format!("sources {total}, RR-Eligible {}", c.rr_eligible),
                );
            }
        }
        let mut previous = 1.0;
        for p in &c.pec {
            if !(0.0..=previous).contains(&p.value) {
                fail(
                    "PEC non-increasing in [0, 1]",
                    format!("PEC({}) = {} after {previous}", p.k, p.value),
                );
            }
            previous = p.value;
            match p.elig {
                Some(e) if !(0.0..=1.0).contains(&e) => {
                    fail("0 <= PEC_elig <= 1", format!("PEC_elig({}) = {e}", p.k))
                }
                Some(e) => {
                    let rhs = p.n_k as f64 / n * e;
                    if (p.value - rhs).abs() > IDENTITY_TOLERANCE {
                        fail(
                            "eq. 7: PEC(k) = (n_k/N) PEC_elig(k)",
                            format!("k = {}: {} vs {rhs}", p.k, p.value),
                        );
                    }
                }
                None if p.n_k > 0 => fail(
                    "PEC_elig defined when n_k > 0",
                    format!("k = {}, n_k = {}", p.k, p.n_k),
                ),
                None => {}
            }
        }
        if let (Some(s), Some(r), Some(py)) =
            (c.uninterrupted_success, c.rr.value, c.final_success.value)
        {
            let rhs = ter * s + (1.0 - ter) * r;
            if (py - rhs).abs() > IDENTITY_TOLERANCE {
                fail(
                    "eq. 12: P(Y) = q s + (1 - q) r",
                    format!("P(Y) {py} vs {rhs}"),
                );
            }
        }
        let intervals = [
            ("TER", c.ter),
            ("mean FED", c.mean_fed),
            ("AUC-PEC", c.auc_pec),
            ("final success", c.final_success),
            ("RR", c.rr),
        ];
        for (name, e) in intervals {
            if let Some([lo, hi]) = e.ci {
                if lo.partial_cmp(&hi) == Some(std::cmp::Ordering::Greater)
                    || lo.is_nan()
                    || hi.is_nan()
                {
                    fail("interval lo <= hi", format!("{name}: [{lo}, {hi}]"));
                }
            }
        }
    }
    out
}
