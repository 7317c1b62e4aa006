//! What the user is looking at, and its mirror in the URL hash.
//!
//! The hash holds the tab, the condition filters, the report's filter and the comparison (and a
//! few display choices), so a reload or a shared link restores the view. The data itself is never in the
//! URL.

use leptos::prelude::*;

use crate::browse::Outcome;
use crate::report::table::Column;

/// The tabs, in display order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Table,
    Ranks,
    Curves,
    Checkpoints,
    Outcomes,
    Labels,
    Cost,
    Compare,
    Rollouts,
}

impl Tab {
    pub const ALL: [Tab; 9] = [
        Tab::Table,
        Tab::Ranks,
        Tab::Curves,
        Tab::Checkpoints,
        Tab::Outcomes,
        Tab::Labels,
        Tab::Cost,
        Tab::Compare,
        Tab::Rollouts,
    ];

    /// The tab's name in the URL and in its `data-testid` (`tab-<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Tab::Table => "table",
            Tab::Ranks => "ranks",
            Tab::Curves => "curves",
            Tab::Checkpoints => "checkpoints",
            Tab::Outcomes => "outcomes",
            Tab::Labels => "labels",
            Tab::Cost => "cost",
            Tab::Compare => "compare",
            Tab::Rollouts => "rollouts",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Tab::Table => "Main table",
            Tab::Ranks => "Ranks",
            Tab::Curves => "Survival curves",
            Tab::Checkpoints => "PEC checkpoints",
            Tab::Outcomes => "Outcomes",
            Tab::Labels => "First failures",
            Tab::Cost => "Cost",
            Tab::Compare => "Paired comparison",
            Tab::Rollouts => "Rollouts",
        }
    }

    pub fn from_name(name: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// The view store; see the module documentation.
#[derive(Clone, Copy)]
pub struct ViewState {
    pub tab: RwSignal<Tab>,
    /// Condition filters: empty = all.
    pub dataset: RwSignal<String>,
    pub model: RwSignal<String>,
    pub decimals: RwSignal<usize>,
    pub intervals: RwSignal<bool>,
    /// Main table sort: column and descending.
    pub sort: RwSignal<Option<(Column, bool)>>,
    pub elig: RwSignal<bool>,
    pub band: RwSignal<bool>,
    pub k_from: RwSignal<usize>,
    pub k_to: RwSignal<usize>,
    /// Series hidden through the legend, by method name.
    pub hidden: RwSignal<Vec<String>>,
    /// Depths shown in the checkpoint table, as typed (e.g. "1,2,4,8").
    pub checkpoints: RwSignal<String>,
    pub cost_baseline: RwSignal<String>,
    /// The cost field of the frontier plots (`tokens`, `latency_s`, `usd`); empty = the first
    /// the report has.
    pub cost_field: RwSignal<String>,
    /// The Ranks view: the metric of the rank-interval plot and the prefix metric of the bump
    /// chart (report keys, `ranks[].metric`).
    pub rank_metric: RwSignal<String>,
    pub bump_metric: RwSignal<String>,
    pub cmp_dataset: RwSignal<String>,
    pub cmp_model: RwSignal<String>,
    pub cmp_a: RwSignal<String>,
    /// B's model; empty = A's (`cmp_model`).
    pub cmp_b_model: RwSignal<String>,
    pub cmp_b: RwSignal<String>,
    /// The task opened side by side in the comparison.
    pub cmp_task: RwSignal<String>,
    /// Rollout browser: condition as "dataset\u{1f}model\u{1f}method", outcome filter, search.
    /// Main-table layout ("paper" / "leaderboard"); empty = automatic
    /// ([`crate::report::table::Layout::default_for`]).
    pub layout: RwSignal<String>,
    pub rb_condition: RwSignal<String>,
    pub rb_outcome: RwSignal<Outcome>,
    pub rb_search: RwSignal<String>,
    pub rb_offset: RwSignal<usize>,
    /// The rollout opened in the browser (its task, trial and step; its condition is
    /// `rb_condition`): in the hash, so every rollout and step has a link.
    pub rb_open: RwSignal<Option<crate::browse::RolloutLink>>,
    /// Show the page of the list that holds `rb_open` (set by a link, a search hit or
    /// previous/next; cleared once that page is shown, so paging by hand stays put).
    pub rb_seek: RwSignal<bool>,
    /// The list restricted to a failure cluster (a cell of the clusters table).
    pub rb_cluster: RwSignal<Option<crate::browse::ClusterPick>>,
    /// The page shown of a long list (tables and plots); back to the first on a new tab or filter.
    pub page: RwSignal<usize>,
    /// The filter the report is restricted to (the grammar of [`crate::filter`], as the worker
    /// spelled it back); empty: none. In the hash as `filter=`, so a link re-scores with it.
    pub filter: RwSignal<String>,
}

impl ViewState {
    /// Opens a rollout (at a step) in the rollout browser; `seek` also shows the page of the
    /// list that holds it (a hit, a link, previous/next), where a click on a row stays on its
    /// page.
    pub fn open_rollout(&self, key: &crate::browse::RolloutKey, step: Option<usize>, seek: bool) {
        // The condition as the browser's select spells it.
        self.rb_condition.set(format!(
            "{}\u{1f}{}\u{1f}{}",
            key.dataset, key.model, key.method
        ));
        self.rb_open.set(Some(crate::browse::RolloutLink {
            task_id: key.task_id.clone(),
            trial: key.trial,
            step,
        }));
        self.rb_seek.set(seek);
    }

    /// The main-table layout: the chosen one, else the report's default.
    pub fn table_layout(&self, report: &crate::report::Report) -> crate::report::table::Layout {
        crate::report::table::Layout::from_name(&self.layout.get())
            .unwrap_or_else(|| crate::report::table::Layout::default_for(report))
    }
}

impl Default for ViewState {
    fn default() -> Self {
        Self::new()
    }
}

impl ViewState {
    pub fn new() -> Self {
        ViewState {
            tab: RwSignal::new(Tab::Table),
            dataset: RwSignal::new(String::new()),
            model: RwSignal::new(String::new()),
            decimals: RwSignal::new(2),
            intervals: RwSignal::new(true),
            sort: RwSignal::new(None),
            elig: RwSignal::new(false),
            band: RwSignal::new(true),
            k_from: RwSignal::new(1),
            k_to: RwSignal::new(10),
            hidden: RwSignal::new(Vec::new()),
            checkpoints: RwSignal::new("1,2,3,4,5".to_string()),
            cost_baseline: RwSignal::new(String::new()),
            cost_field: RwSignal::new(String::new()),
            rank_metric: RwSignal::new("final_success".to_string()),
            bump_metric: RwSignal::new("ter".to_string()),
            cmp_dataset: RwSignal::new(String::new()),
            cmp_model: RwSignal::new(String::new()),
            cmp_a: RwSignal::new(String::new()),
            cmp_b_model: RwSignal::new(String::new()),
            cmp_b: RwSignal::new(String::new()),
            cmp_task: RwSignal::new(String::new()),
            layout: RwSignal::new(String::new()),
            rb_condition: RwSignal::new(String::new()),
            rb_outcome: RwSignal::new(Outcome::All),
            rb_search: RwSignal::new(String::new()),
            rb_offset: RwSignal::new(0),
            rb_open: RwSignal::new(None),
            rb_seek: RwSignal::new(false),
            rb_cluster: RwSignal::new(None),
            page: RwSignal::new(0),
            filter: RwSignal::new(String::new()),
        }
    }

    /// The hash for the current view: `key=value` pairs, percent-encoded.
    pub fn to_hash(&self) -> String {
        let mut parts: Vec<(&str, String)> = vec![("tab", self.tab.get().name().to_string())];
        let mut put = |k: &'static str, v: String| {
            if !v.is_empty() {
                parts.push((k, v));
            }
        };
        put("ds", self.dataset.get());
        put("model", self.model.get());
        put("cmp_ds", self.cmp_dataset.get());
        put("cmp_model", self.cmp_model.get());
        put("a", self.cmp_a.get());
        put("b_model", self.cmp_b_model.get());
        put("b", self.cmp_b.get());
        put("task", self.cmp_task.get());
        put("cond", self.rb_condition.get());
        put("layout", self.layout.get());
        put("filter", self.filter.get());
        if self.elig.get() {
            put("curve", "elig".to_string());
        }
        if (self.k_from.get(), self.k_to.get()) != (1, 10) {
            put("k", format!("{}-{}", self.k_from.get(), self.k_to.get()));
        }
        put("hide", self.hidden.get().join("\u{1f}"));
        if self.decimals.get() != 2 {
            put("dp", self.decimals.get().to_string());
        }
        put("base", self.cost_baseline.get());
        put("cost", self.cost_field.get());
        if self.rank_metric.get() != "final_success" {
            put("rank", self.rank_metric.get());
        }
        if self.bump_metric.get() != "ter" {
            put("bump", self.bump_metric.get());
        }
        if let Some(link) = self.rb_open.get() {
            parts.extend(link.params());
        }
        // The cluster the list is restricted to, as JSON: its fields are free text.
        if let Some(pick) = self.rb_cluster.get() {
            parts.push(("cluster", serde_json::to_string(&pick).unwrap_or_default()));
        }
        parts
            .iter()
            .map(|(k, v)| format!("{k}={}", String::from(js_sys::encode_uri_component(v))))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// Applies a hash (without the `#`); unknown keys and bad values are ignored.
    pub fn apply_hash(&self, hash: &str) {
        let decoded: Vec<(String, String)> = hash
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| {
                let v = js_sys::decode_uri_component(v).map(String::from);
                (k.to_string(), v.unwrap_or_default())
            })
            .collect();
        let link = crate::browse::RolloutLink::from_params(
            decoded.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        );
        if link.is_some() {
            self.rb_seek.set(true);
        }
        self.rb_open.set(link);
        for pair in hash.split('&') {
            let Some((k, v)) = pair.split_once('=') else {
                continue;
            };
            let v: String = js_sys::decode_uri_component(v)
                .map(String::from)
                .unwrap_or_default();
            match k {
                "tab" => {
                    if let Some(t) = Tab::from_name(&v) {
                        self.tab.set(t)
                    }
                }
                "ds" => self.dataset.set(v),
                "model" => self.model.set(v),
                "cmp_ds" => self.cmp_dataset.set(v),
                "cmp_model" => self.cmp_model.set(v),
                "a" => self.cmp_a.set(v),
                "b_model" => self.cmp_b_model.set(v),
                "b" => self.cmp_b.set(v),
                "task" => self.cmp_task.set(v),
                "cond" => self.rb_condition.set(v),
                "layout" => self.layout.set(v),
                "filter" => self.filter.set(v),
                "curve" => self.elig.set(v == "elig"),
                "k" => {
                    if let Some((a, b)) = v.split_once('-') {
                        if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                            if a >= 1 && b >= a {
                                self.k_from.set(a);
                                self.k_to.set(b);
                            }
                        }
                    }
                }
                "hide" => self.hidden.set(
                    v.split('\u{1f}')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
                "dp" => {
                    if let Ok(d) = v.parse::<usize>() {
                        self.decimals.set(d.clamp(2, 4))
                    }
                }
                "base" => self.cost_baseline.set(v),
                "cost" => self.cost_field.set(v),
                "rank" if crate::report::ranks::RankMetric::from_key(&v).is_some() => {
                    self.rank_metric.set(v)
                }
                "bump" if v == "ter" || v == "auc_pec" => self.bump_metric.set(v),
                "cluster" => self.rb_cluster.set(serde_json::from_str(&v).ok()),
                _ => {}
            }
        }
    }
}
