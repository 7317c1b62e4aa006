//! Deterministic generator of a SYNTHETIC rollout grid shaped like the paper's Table 2.
//!
//! Three datasets × three models × four methods, one rollout per task per condition
//! (200 + 200 + 164 tasks, 6,768 rollouts), written as canonical rollout JSONL. The data are
//! invented: per condition the generator hits the paper's RR-Eligible (hence TER) and success
//! counts exactly and fits horizons and first-error depths so that mean FED, AUC-PEC and (on
//! BFCL) PEC@4 match the paper's table. A per-task latent difficulty and horizon are shared by
//! all conditions, so paired comparisons between conditions are meaningful. The
//! tau3-airline-retail numbers are made up in the same spirit (the paper's table has none).
//!
//! ```text
//! cargo run --release --example synth_grid -- [--seed S] [-o FILE] [--copies K]
//! ```
//!
//! * `--seed S`   seed of the ChaCha8 stream (default 7); same seed ⇒ byte-identical output.
//! * `-o FILE`    write to FILE instead of stdout.
//! * `--copies K` repeat the grid K times with fresh draws (task ids of copy r ≥ 2 get the
//!   suffix `#r<r>`), for benchmark inputs of any size (≈ 3.4 MB per copy: `--copies 300`
//!   ≈ 1 GB).
//!
//! A table of the achieved metrics per condition (with the targets) goes to stderr.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

const MODELS: [&str; 3] = ["GPT-5.4", "GPT-4.1", "Llama-4-Maverick"];
const METHODS: [&str; 4] = ["ReAct", "Prompt Planning", "Plan-Cond. ReAct", "Dual-Loop"];
const LABELS: [&str; 5] = [
    "schema",
    "dependency",
    "precondition",
    "state",
    "information",
];

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

/// Per-dataset targets, indexed `[model][method]`.
struct Targets {
    /// TER as printed in the paper (display only: the RR-Eligible count decides).
    ter: [[f64; 4]; 3],
    /// RR-Eligible count: rollouts with FED ≤ T (so TER = 1 − fail/N).
    fail: [[usize; 4]; 3],
    mean_fed: [[f64; 4]; 3],
    auc: [[f64; 4]; 3],
    success: [[f64; 4]; 3],
    /// Successes among failed-prefix rollouts, when the paper pins it.
    fail_success: [[Option<usize>; 4]; 3],
    /// PEC@4 = share with FED > 4, when the paper reports it.
    pec4: [[Option<f64>; 4]; 3],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ds {
    Bfcl,
    ToolSandbox,
    Tau,
}

struct Dataset {
    kind: Ds,
    name: &'static str,
    short: &'static str,
    n_tasks: usize,
    /// Bounds of the horizon T of a tool rollout.
    t_lo: u32,
    t_hi: u32,
    /// Spread (sd, in steps) of the per-task horizon latent.
    t_spread: f64,
    targets: Targets,
}

fn datasets() -> [Dataset; 3] {
    let n = None;
    let m: Option<f64> = None;
    [
        Dataset {
            kind: Ds::Bfcl,
            name: "bfcl-v3",
            short: "BFCL",
            n_tasks: 200,
            t_lo: 2,
            t_hi: 12,
            t_spread: 1.8,
            targets: Targets {
                ter: [
                    [0.69, 0.78, 0.47, 0.94],
                    [0.62, 0.79, 0.35, 0.96],
                    [0.37, 0.60, 0.05, 0.88],
                ],
                fail: [[61, 44, 106, 12], [76, 43, 130, 7], [126, 79, 190, 25]],
                mean_fed: [
                    [5.61, 5.72, 4.11, 6.41],
                    [5.18, 5.84, 3.55, 6.46],
                    [4.39, 5.51, 1.96, 6.22],
                ],
                auc: [
                    [0.83, 0.85, 0.54, 0.96],
                    [0.76, 0.87, 0.42, 0.98],
                    [0.62, 0.79, 0.15, 0.93],
                ],
                // Plan-Cond. ReAct / GPT-5.4: 0.935 = 187/200 (prints as .94) so that RR is
                // 93/106 = .88 as in the paper; 188 would force RR = 94/106 = .89.
                success: [
                    [0.61, 0.78, 0.935, 0.94],
                    [0.52, 0.77, 0.93, 0.96],
                    [0.27, 0.56, 0.74, 0.79],
                ],
                fail_success: [
                    [Some(0), Some(0), Some(93), Some(0)],
                    [n, n, n, n],
                    [n, n, Some(138), Some(0)],
                ],
                pec4: [
                    [m, m, Some(0.42), Some(0.82)],
                    [m, m, Some(0.33), Some(0.82)],
                    [m, m, Some(0.05), Some(0.78)],
                ],
            },
        },
        Dataset {
            kind: Ds::ToolSandbox,
            name: "toolsandbox",
            short: "ToolSandbox",
            n_tasks: 200,
            t_lo: 1,
            t_hi: 8,
            t_spread: 1.2,
            targets: Targets {
                ter: [
                    [0.74, 0.82, 0.48, 0.94],
                    [0.72, 0.81, 0.35, 0.96],
                    [0.49, 0.64, 0.09, 0.80],
                ],
                fail: [[52, 35, 103, 13], [56, 37, 129, 8], [101, 73, 182, 40]],
                mean_fed: [
                    [3.84, 4.08, 2.88, 4.32],
                    [3.84, 4.11, 2.45, 4.38],
                    [3.33, 3.69, 1.63, 4.13],
                ],
                auc: [
                    [0.83, 0.88, 0.52, 0.95],
                    [0.84, 0.89, 0.40, 0.97],
                    [0.68, 0.78, 0.15, 0.90],
                ],
                success: [
                    [0.59, 0.61, 0.69, 0.63],
                    [0.49, 0.56, 0.62, 0.62],
                    [0.38, 0.49, 0.56, 0.61],
                ],
                fail_success: [[n; 4]; 3],
                pec4: [[m; 4]; 3],
            },
        },
        // Invented: no paper numbers. Mean FED = 1 + AUC·t for a nominal horizon t per
        // condition (ReAct: GPT-5.4 9.0, GPT-4.1 8.6, Llama 8.0; the other methods 0.3–0.6
        // steps longer).
        Dataset {
            kind: Ds::Tau,
            name: "tau3-airline-retail",
            short: "tau3",
            n_tasks: 164,
            t_lo: 3,
            t_hi: 18,
            t_spread: 2.2,
            targets: Targets {
                ter: [
                    [0.95, 0.88, 0.62, 0.91],
                    [0.84, 0.80, 0.55, 0.82],
                    [0.56, 0.60, 0.52, 0.66],
                ],
                fail: [[8, 20, 62, 15], [26, 33, 74, 30], [72, 66, 79, 56]],
                mean_fed: [
                    [9.58, 9.46, 7.72, 9.84],
                    [8.83, 8.83, 7.07, 9.01],
                    [5.96, 6.40, 5.82, 7.05],
                ],
                auc: [
                    [0.953, 0.91, 0.70, 0.94],
                    [0.91, 0.88, 0.66, 0.89],
                    [0.62, 0.65, 0.56, 0.72],
                ],
                success: [
                    [0.43, 0.45, 0.51, 0.48],
                    [0.44, 0.51, 0.47, 0.48],
                    [0.18, 0.18, 0.18, 0.21],
                ],
                fail_success: [[n; 4]; 3],
                pec4: [[m; 4]; 3],
            },
        },
    ]
}

/// Default recovery rate (successes among failed-prefix rollouts) per method, used when the
/// paper does not pin it; clamped so that the success count is reachable.
const DEFAULT_RR: [f64; 4] = [0.05, 0.05, 0.45, 0.0];

// ---------------------------------------------------------------------------------------------
// Vocabulary: tools and error texts
// ---------------------------------------------------------------------------------------------

/// A tool domain: the first `entry` tools are typical opening calls.
struct Domain {
    entry: usize,
    tools: &'static [&'static str],
}

const BFCL_DOMAINS: [Domain; 5] = [
    Domain {
        entry: 3,
        tools: &[
            "cd", "ls", "pwd", "mv", "cp", "mkdir", "touch", "cat", "grep", "echo", "find", "rm",
            "wc", "sort", "tail", "diff",
        ],
    },
    Domain {
        entry: 1,
        tools: &[
            "authenticate_twitter",
            "post_tweet",
            "comment",
            "retweet",
            "get_tweet",
            "follow_user",
            "mention",
        ],
    },
    Domain {
        entry: 2,
        tools: &[
            "get_stock_info",
            "get_watchlist",
            "place_order",
            "cancel_order",
            "add_to_watchlist",
            "get_order_details",
            "make_transaction",
            "get_account_info",
        ],
    },
    Domain {
        entry: 2,
        tools: &[
            "authenticate_travel",
            "get_flight_cost",
            "book_flight",
            "compute_exchange_rate",
            "get_credit_card_balance",
            "purchase_insurance",
            "verify_traveler_information",
            "cancel_booking",
        ],
    },
    Domain {
        entry: 2,
        tools: &[
            "startEngine",
            "lockDoors",
            "fillFuelTank",
            "pressBrakePedal",
            "check_tire_pressure",
            "displayCarStatus",
            "set_navigation",
            "estimate_distance",
        ],
    },
];

const BFCL_EXTRA: [&str; 6] = [
    "send_message",
    "message_login",
    "create_ticket",
    "get_ticket",
    "mean",
    "add",
];

const TS_TOOLS: Domain = Domain {
    entry: 3,
    tools: &[
        "get_current_timestamp",
        "search_contacts",
        "get_cellular_service_status",
        "set_cellular_service_status",
        "set_wifi_status",
        "get_wifi_status",
        "set_location_service_status",
        "get_current_location",
        "add_contact",
        "modify_contact",
        "remove_contact",
        "send_message_with_phone_number",
        "search_messages",
        "add_reminder",
        "search_reminder",
        "modify_reminder",
        "remove_reminder",
        "search_weather_around_lat_lon",
        "search_location_around_lat_lon",
        "search_stock",
        "convert_currency",
        "unit_conversion",
        "timestamp_diff",
        "search_holiday",
    ],
};

const TS_CATEGORIES: [&str; 6] = [
    "single_tool",
    "multiple_tool",
    "multiple_user_turn",
    "state_dependency",
    "canonicalization",
    "insufficient_information",
];

const AIRLINE: Domain = Domain {
    entry: 2,
    tools: &[
        "get_user_details",
        "get_reservation_details",
        "search_direct_flight",
        "search_onestop_flight",
        "list_all_airports",
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
        "send_certificate",
        "calculate",
        "transfer_to_human_agents",
        "get_flight_status",
    ],
};

const RETAIL: Domain = Domain {
    entry: 2,
    tools: &[
        "find_user_id_by_email",
        "find_user_id_by_name_zip",
        "get_user_details",
        "get_order_details",
        "get_product_details",
        "list_all_product_types",
        "cancel_pending_order",
        "modify_pending_order_items",
        "modify_pending_order_address",
        "modify_pending_order_payment",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
        "modify_user_address",
        "calculate",
    ],
};

/// Error texts per label (schema, dependency, precondition, state, information).
fn errors(ds: Ds, label: usize) -> &'static [&'static str] {
    match (ds, label) {
        (Ds::Bfcl, 0) => &[
            "Missing required argument 'destination'",
            "Invalid type for 'amount': expected float",
            "Unexpected keyword argument 'path'",
            "Unknown function 'move_file'",
            "Invalid value for 'order_type'",
        ],
        (Ds::Bfcl, 1) => &[
            "Referenced value not produced by an earlier call",
            "Unknown order id: not returned by a prior call",
            "Placeholder '<file_name>' never resolved",
        ],
        (Ds::Bfcl, 2) => &[
            "No such file or directory",
            "User not authenticated",
            "Engine must be started first",
            "Insufficient balance",
            "Not logged in to the messaging service",
            "Brake pedal must be pressed to start",
        ],
        (Ds::Bfcl, 3) => &[
            "File already exists",
            "Directory not empty",
            "Order already cancelled",
            "Tweet already retweeted",
            "Fuel amount exceeds tank capacity",
        ],
        (Ds::Bfcl, _) => &[
            "Required value not given by the user",
            "No available function for this step",
            "Ambiguous target: several matching files",
            "Missing parameter value in the request",
        ],
        (Ds::ToolSandbox, 0) => &[
            "Invalid type for 'latitude': expected float",
            "Missing required argument 'phone_number'",
            "Unknown tool 'send_sms'",
            "Invalid timestamp format",
        ],
        (Ds::ToolSandbox, 1) => &[
            "person_id not obtained from search_contacts",
            "Reminder id not returned by a prior call",
            "Location not resolved before weather lookup",
        ],
        (Ds::ToolSandbox, 2) => &[
            "Cellular service is turned off",
            "Wi-Fi is turned off",
            "Location service is turned off",
            "Low battery mode is on",
        ],
        (Ds::ToolSandbox, 3) => &[
            "Contact already exists",
            "Reminder already removed",
            "Message already sent",
            "Setting already at requested value",
        ],
        (Ds::ToolSandbox, _) => &[
            "Ambiguous contact: several matches",
            "Recipient not specified by the user",
            "Date not given in the conversation",
        ],
        (Ds::Tau, 0) => &[
            "Missing required argument 'payment_method_id'",
            "Invalid cabin 'premium'",
            "Invalid type for 'item_ids': expected list",
            "Unknown tool 'refund_order'",
        ],
        (Ds::Tau, 1) => &[
            "Reservation id not retrieved before update",
            "user_id not obtained from a lookup",
            "Item id not taken from get_order_details",
        ],
        (Ds::Tau, 2) => &[
            "Order status is not pending",
            "Basic economy reservations cannot be modified",
            "Payment method not found for user",
            "Flight has already departed",
            "Gift card balance is not enough",
        ],
        (Ds::Tau, 3) => &[
            "Reservation already cancelled",
            "Order already modified",
            "Items already returned",
            "Seat no longer available",
        ],
        (Ds::Tau, _) => &[
            "User zip code not provided",
            "Cannot identify reservation from conversation",
            "Passenger details incomplete",
            "Ambiguous order: several pending orders",
        ],
    }
}

/// First-failure label weights (schema, dependency, precondition, state, information).
fn label_weights(ds: Ds, category: &str, model: usize, method: usize) -> [f64; 5] {
    let mut w = match model {
        0 => [0.14, 0.18, 0.30, 0.24, 0.14],
        1 => [0.22, 0.18, 0.27, 0.21, 0.12],
        _ => [0.38, 0.16, 0.21, 0.15, 0.10],
    };
    match ds {
        Ds::Bfcl => match category {
            "multi_turn_miss_func" => w[4] *= 2.5,
            "multi_turn_miss_param" => {
                w[4] *= 2.0;
                w[0] *= 1.3;
            }
            "multi_turn_long_context" => {
                w[3] *= 1.3;
                w[1] *= 1.4;
            }
            _ => {}
        },
        Ds::ToolSandbox => {
            w[2] *= 1.3;
            w[3] *= 1.2;
            if category == "insufficient_information" {
                w[4] *= 2.5;
            }
        }
        Ds::Tau => {
            w[4] *= 1.5;
            w[2] *= 1.3;
        }
    }
    if method >= 2 {
        w[1] *= 1.4; // plan-conditioned methods reference earlier outputs more often
    }
    w
}

// ---------------------------------------------------------------------------------------------
// Random helpers
// ---------------------------------------------------------------------------------------------

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller; u1 in (0, 1].
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.random_range(0..xs.len())]
}

fn weighted(rng: &mut ChaCha8Rng, w: &[f64]) -> usize {
    let total: f64 = w.iter().sum();
    let mut x = rng.random::<f64>() * total;
    for (i, &wi) in w.iter().enumerate() {
        if x < wi {
            return i;
        }
        x -= wi;
    }
    w.len() - 1
}

// ---------------------------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------------------------

struct Task {
    id: String,
    category: &'static str,
    /// Latent difficulty (higher = harder), shared by all conditions.
    difficulty: f64,
    /// Latent horizon offset (standard units), shared by all conditions.
    horizon: f64,
    /// The task's canonical tool sequence (long enough for any horizon).
    plan: Vec<&'static str>,
    /// Tools a rollout may substitute for a planned one.
    pool: Vec<&'static str>,
}

fn make_tasks(ds: &Dataset, copy: usize, rng: &mut ChaCha8Rng) -> Vec<Task> {
    let suffix = if copy == 0 {
        String::new()
    } else {
        format!("#r{}", copy + 1)
    };
    let mut tasks = Vec::with_capacity(ds.n_tasks);
    for i in 0..ds.n_tasks {
        let (id, category, shift): (String, &'static str, f64) = match ds.kind {
            Ds::Bfcl => {
                const CATS: [&str; 4] = [
                    "multi_turn_base",
                    "multi_turn_miss_func",
                    "multi_turn_miss_param",
                    "multi_turn_long_context",
                ];
                let c = CATS[i / 50];
                let shift = [0.0, 0.25, 0.2, 0.3][i / 50];
                (format!("{c}_{}", i % 50), c, shift)
            }
            Ds::ToolSandbox => {
                let c = *pick(rng, &TS_CATEGORIES);
                let shift = match c {
                    "single_tool" => -0.3,
                    "state_dependency" | "insufficient_information" => 0.3,
                    _ => 0.0,
                };
                (format!("ts_{i:03}"), c, shift)
            }
            Ds::Tau => {
                if i < 50 {
                    (format!("airline_{i}"), "airline", 0.15)
                } else {
                    (format!("retail_{}", i - 50), "retail", 0.0)
                }
            }
        };
        let difficulty = shift + normal(rng);
        let horizon = 0.35 * difficulty + 0.9 * normal(rng);
        let len = ds.t_hi as usize;
        let (plan, pool) = match ds.kind {
            Ds::Bfcl => {
                let d = pick(rng, &BFCL_DOMAINS);
                let mut pool: Vec<&'static str> = d.tools.to_vec();
                if rng.random::<f64>() < 0.4 {
                    pool.push(*pick(rng, &BFCL_EXTRA));
                }
                (make_plan(rng, d.entry, &pool, len), pool)
            }
            Ds::ToolSandbox => {
                let pool = TS_TOOLS.tools.to_vec();
                (make_plan(rng, TS_TOOLS.entry, &pool, len), pool)
            }
            Ds::Tau => {
                let d = if i < 50 { &AIRLINE } else { &RETAIL };
                let pool = d.tools.to_vec();
                (make_plan(rng, d.entry, &pool, len), pool)
            }
        };
        tasks.push(Task {
            id: format!("{id}{suffix}"),
            category,
            difficulty,
            horizon,
            plan,
            pool,
        });
    }
    tasks
}

fn make_plan(
    rng: &mut ChaCha8Rng,
    entry: usize,
    pool: &[&'static str],
    len: usize,
) -> Vec<&'static str> {
    let mut plan = Vec::with_capacity(len);
    plan.push(pool[rng.random_range(0..entry)]);
    while plan.len() < len {
        let t = *pick(rng, pool);
        // Avoid immediate repeats most of the time.
        if Some(&t) == plan.last() && rng.random::<f64>() < 0.8 {
            continue;
        }
        plan.push(t);
    }
    plan
}

// ---------------------------------------------------------------------------------------------
// Fitting one condition
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Item {
    /// Horizon T (1 for a no-tool rollout).
    t: u32,
    /// First-error depth, 1..=T+1.
    fed: u32,
    exec: bool,
    no_tool: bool,
    success: bool,
}

impl Item {
    fn auc(&self) -> f64 {
        (self.fed - 1) as f64 / self.t as f64
    }
}

struct Fit {
    fed_sum: f64,
    auc_sum: f64,
    pec4: Option<i64>,
}

impl Fit {
    fn loss(&self, fed: i64, auc: f64, pec: i64) -> f64 {
        let a = fed as f64 - self.fed_sum;
        let b = (auc - self.auc_sum) / 0.05;
        let c = self.pec4.map_or(0.0, |p| 2.0 * ((pec - p) as f64).powi(2));
        a * a + b * b + c
    }
}

/// One random change of a tool rollout — usually ±1, sometimes a jump to a uniform value — of
/// its horizon (fully executable: FED follows; failed: FED stays) or its first-error depth
/// (failed only). `None` when it would leave the bounds or change nothing.
fn propose(it: Item, lo: u32, hi: u32, rng: &mut ChaCha8Rng) -> Option<Item> {
    let jump = rng.random::<f64>() < 0.25;
    let step = |x: u32, a: u32, b: u32, rng: &mut ChaCha8Rng| -> Option<u32> {
        let y = if jump {
            rng.random_range(a..=b)
        } else if rng.random::<bool>() {
            x + 1
        } else {
            x.checked_sub(1)?
        };
        ((a..=b).contains(&y) && y != x).then_some(y)
    };
    let mut new = it;
    if it.exec {
        new.t = step(it.t, lo, hi, rng)?;
        new.fed = new.t + 1;
    } else if rng.random::<bool>() {
        new.fed = step(it.fed, 1, it.t, rng)?;
    } else {
        new.t = step(it.t, lo.max(it.fed), hi, rng)?;
    }
    Some(new)
}

/// Adjusts horizons and first-error depths of the tool rollouts (exec/fail status fixed) until
/// the FED sum, AUC sum and PEC@4 count hit their targets: a descent over single and paired ±1
/// moves (pairs let FED-neutral or PEC-neutral rearrangements through). Returns whether it
/// converged.
fn fit(items: &mut [Item], tgt: &Fit, lo: u32, hi: u32, rng: &mut ChaCha8Rng) -> bool {
    let n = items.len() as f64;
    let movable: Vec<usize> = (0..items.len()).filter(|&i| !items[i].no_tool).collect();
    let mut fed: i64 = items.iter().map(|x| x.fed as i64).sum();
    let mut auc: f64 = items.iter().map(Item::auc).sum();
    let mut pec: i64 = items.iter().filter(|x| x.fed > 4).count() as i64;
    let mut loss = tgt.loss(fed, auc, pec);
    let done = |fed: i64, auc: f64, pec: i64| {
        (fed as f64 - tgt.fed_sum).abs() <= 0.5
            && (auc - tgt.auc_sum).abs() <= 0.0008 * n
            && tgt.pec4.is_none_or(|p| p == pec)
    };
    for round in 0..2_000_000u32 {
        if done(fed, auc, pec) {
            return true;
        }
        if round % 4096 == 0 {
            auc = items.iter().map(Item::auc).sum(); // against float drift
            loss = tgt.loss(fed, auc, pec);
        }
        let pair = rng.random::<f64>() < 0.4;
        let i = movable[rng.random_range(0..movable.len())];
        let j = movable[rng.random_range(0..movable.len())];
        if pair && i == j {
            continue;
        }
        let Some(a) = propose(items[i], lo, hi, rng) else {
            continue;
        };
        let b = if pair {
            match propose(items[j], lo, hi, rng) {
                Some(b) => Some(b),
                None => continue,
            }
        } else {
            None
        };
        let mut nfed = fed;
        let mut nauc = auc;
        let mut npec = pec;
        for (old, new) in std::iter::once((items[i], a)).chain(b.map(|b| (items[j], b))) {
            nfed += new.fed as i64 - old.fed as i64;
            nauc += new.auc() - old.auc();
            npec += (new.fed > 4) as i64 - (old.fed > 4) as i64;
        }
        let nloss = tgt.loss(nfed, nauc, npec);
        if nloss < loss - 1e-12 {
            items[i] = a;
            if let Some(b) = b {
                items[j] = b;
            }
            fed = nfed;
            auc = nauc;
            pec = npec;
            loss = nloss;
        }
    }
    done(fed, auc, pec)
}

/// Builds one condition's items (indexed like `tasks`): who executes fully, horizons, depths,
/// no-tool rollouts, success.
#[allow(clippy::too_many_arguments)]
fn make_condition(
    ds: &Dataset,
    tasks: &[Task],
    model: usize,
    method: usize,
    rng: &mut ChaCha8Rng,
    warnings: &mut Vec<String>,
) -> Vec<Item> {
    let tg = &ds.targets;
    let n = tasks.len();
    let n_fail = tg.fail[model][method];
    let n_exec = n - n_fail;
    let n_succ = (tg.success[model][method] * n as f64).round() as usize;
    let fail_succ = match tg.fail_success[model][method] {
        Some(s) => s,
        None => {
            let lo = n_succ.saturating_sub(n_exec);
            let hi = n_fail.min(n_succ);
            ((DEFAULT_RR[method] * n_fail as f64).round() as usize).clamp(lo, hi)
        }
    };
    let exec_succ = n_succ - fail_succ;
    assert!(
        exec_succ <= n_exec && fail_succ <= n_fail,
        "infeasible success split"
    );

    // Who executes fully: the n_exec tasks with the lowest noisy difficulty.
    let mut order: Vec<(f64, usize)> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.difficulty + 0.75 * normal(rng), i))
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut exec = vec![false; n];
    for &(_, i) in &order[..n_exec] {
        exec[i] = true;
    }

    // Nominal horizon of the condition: mean FED ≈ 1 + AUC · t for a constant horizon t.
    let fed_t = tg.mean_fed[model][method];
    let auc_t = tg.auc[model][method];
    let t_c = ((fed_t - 1.0) / auc_t).clamp(ds.t_lo as f64 + 1.0, ds.t_hi as f64 - 1.0);
    // Failed-prefix rollouts: mean (FED − 1)/T they must contribute.
    let f_share = ((auc_t * n as f64 - n_exec as f64) / n_fail.max(1) as f64).clamp(0.01, 0.9);
    let a = 1.0 / f_share - 1.0;

    let mut items = Vec::with_capacity(n);
    for (i, task) in tasks.iter().enumerate() {
        let no_tool = rng.random::<f64>() < 0.012;
        let raw = t_c + ds.t_spread * task.horizon + 0.8 * normal(rng);
        let t = if no_tool {
            1
        } else {
            (raw.round() as i64).clamp(ds.t_lo as i64, ds.t_hi as i64) as u32
        };
        let fed = if exec[i] {
            t + 1
        } else if no_tool {
            1
        } else {
            let u: f64 = rng.random::<f64>();
            (1 + (u.powf(a) * t as f64).floor() as u32).min(t)
        };
        items.push(Item {
            t,
            fed,
            exec: exec[i],
            no_tool,
            success: false,
        });
    }

    let target = Fit {
        fed_sum: fed_t * n as f64,
        auc_sum: auc_t * n as f64,
        pec4: tg.pec4[model][method].map(|p| (p * n as f64).round() as i64),
    };
    if !fit(&mut items, &target, ds.t_lo, ds.t_hi, rng) {
        warnings.push(format!(
            "{} / {} / {}: fit did not converge",
            ds.name, MODELS[model], METHODS[method]
        ));
    }

    // Success: the easiest (noisy) tasks of each group succeed.
    for (want, group) in [(exec_succ, true), (fail_succ, false)] {
        let mut g: Vec<(f64, usize)> = (0..n)
            .filter(|&i| items[i].exec == group)
            .map(|i| (tasks[i].difficulty + 0.75 * normal(rng), i))
            .collect();
        g.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(_, i) in &g[..want] {
            items[i].success = true;
        }
    }
    items
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Costs {
    tokens: u64,
    latency: f64,
    usd: Option<f64>,
}

fn costs(ds: Ds, model: usize, method: usize, it: &Item, rng: &mut ChaCha8Rng) -> Costs {
    let (base, per_step, tool_s) = match ds {
        Ds::Bfcl => (1800.0, 700.0, 0.5),
        Ds::ToolSandbox => (1500.0, 600.0, 0.6),
        Ds::Tau => (3500.0, 1900.0, 0.9),
    };
    let model_f = [1.15, 1.0, 1.08][model];
    let method_f = [1.0, 1.12, 1.22, 1.22][method];
    let steps = if it.no_tool { 0.4 } else { it.t as f64 };
    let mut tokens = (base + per_step * steps) * model_f * method_f;
    tokens *= (0.15 * normal(rng)).exp();
    if !it.exec {
        tokens *= 1.05; // error messages and retries
    }
    let s_per_ktok = [2.6, 1.6, 1.1][model];
    let latency = (tokens / 1000.0 * s_per_ktok + tool_s * steps) * (0.2 * normal(rng)).exp();
    let usd = (ds == Ds::Tau).then(|| tokens / 1000.0 * [0.0040, 0.0030, 0.00045][model]);
    Costs {
        tokens: tokens.round() as u64,
        latency,
        usd,
    }
}

#[allow(clippy::too_many_arguments)]
fn write_rollout(
    out: &mut String,
    ds: &Dataset,
    task: &Task,
    model: usize,
    method: usize,
    it: &Item,
    cost: &Costs,
    rng: &mut ChaCha8Rng,
) {
    out.push_str("{\"dataset\":");
    push_json_str(out, ds.name);
    out.push_str(",\"task_id\":");
    push_json_str(out, &task.id);
    out.push_str(",\"model\":");
    push_json_str(out, MODELS[model]);
    out.push_str(",\"method\":");
    push_json_str(out, METHODS[method]);
    let _ = write!(out, ",\"success\":{},\"steps\":[", it.success);
    let weights = label_weights(ds.kind, task.category, model, method);
    if !it.no_tool {
        for s in 1..=it.t {
            if s > 1 {
                out.push(',');
            }
            let tool = if rng.random::<f64>() < 0.15 {
                *pick(rng, &task.pool)
            } else {
                task.plan[(s - 1) as usize]
            };
            out.push_str("{\"tool\":");
            push_json_str(out, tool);
            let ok = s < it.fed || (s > it.fed && rng.random::<f64>() < 0.7);
            if ok {
                out.push_str(",\"ok\":true}");
            } else if s == it.fed {
                let label = weighted(rng, &weights);
                out.push_str(",\"ok\":false,\"error\":");
                push_json_str(out, pick::<&str>(rng, errors(ds.kind, label)));
                out.push_str(",\"label\":");
                push_json_str(out, LABELS[label]);
                out.push('}');
            } else {
                // Later rejections: flagged only, to keep the bundled file small.
                out.push_str(",\"ok\":false}");
            }
        }
    }
    let _ = write!(out, "],\"no_tool_ok\":{}", it.no_tool && it.exec);
    if it.no_tool && !it.exec {
        let label = if rng.random::<f64>() < 0.6 {
            "information"
        } else {
            "precondition"
        };
        out.push_str(",\"label\":");
        push_json_str(out, label);
    }
    let _ = write!(
        out,
        ",\"cost\":{{\"tokens\":{},\"latency_s\":{:.1}",
        cost.tokens, cost.latency
    );
    if let Some(usd) = cost.usd {
        let _ = write!(out, ",\"usd\":{usd:.4}");
    }
    out.push_str("},\"meta\":{\"synthetic\":true,\"category\":");
    push_json_str(out, task.category);
    out.push_str("}}\n");
}

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

#[derive(Default, Clone)]
struct Stats {
    n: u64,
    exec: u64,
    fed: u64,
    auc: f64,
    success: u64,
    fail_success: u64,
    pec4: u64,
    horizon: u64,
    tokens: u64,
}

impl Stats {
    fn add(&mut self, it: &Item, tokens: u64) {
        self.n += 1;
        self.exec += it.exec as u64;
        self.fed += it.fed as u64;
        self.auc += it.auc();
        self.success += it.success as u64;
        self.fail_success += (it.success && !it.exec) as u64;
        self.pec4 += (it.fed > 4) as u64;
        self.horizon += it.t as u64;
        self.tokens += tokens;
    }
}

/// Re-reads one emitted line with serde_json and checks it against the item it came from.
fn check_line(line: &str, it: &Item) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let steps = v["steps"].as_array().ok_or("no steps")?;
    let t = if steps.is_empty() {
        1
    } else {
        steps.len() as u32
    };
    let fed = if steps.is_empty() {
        if v["no_tool_ok"].as_bool() == Some(true) {
            2
        } else {
            1
        }
    } else {
        steps
            .iter()
            .position(|s| s["ok"].as_bool() == Some(false))
            .map_or(t + 1, |p| p as u32 + 1)
    };
    if t != it.t || fed != it.fed || v["success"].as_bool() != Some(it.success) {
        return Err(format!("mismatch: T={t} FED={fed} vs {it:?}"));
    }
    if fed <= t && !steps.is_empty() && steps[fed as usize - 1]["label"].as_str().is_none() {
        return Err("first rejected step without label".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

struct Options {
    seed: u64,
    output: Option<String>,
    copies: usize,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        seed: 7,
        output: None,
        copies: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--seed" => {
                o.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "-o" | "--output" => o.output = Some(value("-o")?),
            "--copies" => {
                o.copies = value("--copies")?
                    .parse()
                    .map_err(|e| format!("--copies: {e}"))?;
                if o.copies == 0 {
                    return Err("--copies must be at least 1".into());
                }
            }
            "-h" | "--help" => {
                eprintln!(
                    "synth_grid: synthetic rollout grid shaped like the paper's Table 2\n\n\
                     usage: cargo run --release --example synth_grid -- [--seed S] [-o FILE] [--copies K]\n\n\
                     --seed S     seed (default 7); same seed gives byte-identical output\n\
                     -o FILE      output file (default stdout)\n\
                     --copies K   repeat the grid K times with fresh draws (default 1)"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument '{other}' (try --help)")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("synth_grid: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("synth_grid: {e}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::needless_range_loop)]
fn run(opts: &Options) -> io::Result<()> {
    let sink: Box<dyn Write> = match &opts.output {
        Some(path) => Box::new(std::fs::File::create(path)?),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let dss = datasets();
    let mut stats = vec![vec![vec![Stats::default(); 4]; 3]; dss.len()];
    let mut warnings = Vec::new();
    let mut bytes: u64 = 0;
    let mut line = String::with_capacity(4096);

    for copy in 0..opts.copies {
        for (d, ds) in dss.iter().enumerate() {
            let tasks = make_tasks(ds, copy, &mut rng);
            for model in 0..3 {
                let mut pc_tokens: Vec<u64> = Vec::new();
                for method in 0..4 {
                    let items = make_condition(ds, &tasks, model, method, &mut rng, &mut warnings);
                    for (i, it) in items.iter().enumerate() {
                        let mut c = costs(ds.kind, model, method, it, &mut rng);
                        if method == 2 {
                            pc_tokens.push(c.tokens);
                        } else if method == 3 {
                            // Dual-Loop: +3..12% tokens over Plan-Cond. ReAct on the same task.
                            let f = 1.03 + 0.09 * rng.random::<f64>();
                            let tok = (pc_tokens[i] as f64 * f).round();
                            let scale = tok / c.tokens.max(1) as f64;
                            c.latency *= scale;
                            c.usd = c.usd.map(|u| u * scale);
                            c.tokens = tok as u64;
                        }
                        line.clear();
                        write_rollout(&mut line, ds, &tasks[i], model, method, it, &c, &mut rng);
                        if copy == 0 {
                            if let Err(e) = check_line(line.trim_end(), it) {
                                return Err(io::Error::other(format!("self-check failed: {e}")));
                            }
                        }
                        out.write_all(line.as_bytes())?;
                        bytes += line.len() as u64;
                        stats[d][model][method].add(it, c.tokens);
                    }
                }
            }
        }
    }
    out.flush()?;
    report(&dss, &stats, bytes, opts);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}

#[allow(clippy::needless_range_loop)]
fn report(dss: &[Dataset], stats: &[Vec<Vec<Stats>>], bytes: u64, opts: &Options) {
    let total: u64 = stats.iter().flatten().flatten().map(|s| s.n).sum();
    eprintln!(
        "synth_grid: seed {}, {} cop{}, {} rollouts, {} bytes",
        opts.seed,
        opts.copies,
        if opts.copies == 1 { "y" } else { "ies" },
        total,
        bytes
    );
    eprintln!("achieved (target) per condition; RR = successes among FED ≤ T rollouts");
    eprintln!(
        "{:<12} {:<17} {:<17} {:>12} {:>14} {:>14} {:>11} {:>6} {:>12} {:>12} {:>5} {:>7} {:>5}",
        "dataset",
        "model",
        "method",
        "TER",
        "meanFED",
        "AUC-PEC",
        "RR-Elig",
        "RR",
        "success",
        "PEC@4",
        "T",
        "tokens",
        "DL/PC"
    );
    for (d, ds) in dss.iter().enumerate() {
        let tg = &ds.targets;
        for model in 0..3 {
            let pc_tok = stats[d][model][2].tokens as f64;
            for method in 0..4 {
                let s = &stats[d][model][method];
                let n = s.n as f64;
                let fail = s.n - s.exec;
                let k = opts.copies as f64;
                let pec = match tg.pec4[model][method] {
                    Some(p) => format!("{:.3} ({p:.2})", s.pec4 as f64 / n),
                    None => format!("{:.3}      ", s.pec4 as f64 / n),
                };
                let ratio = if method == 3 {
                    format!("{:.3}", s.tokens as f64 / pc_tok)
                } else {
                    String::new()
                };
                eprintln!(
                    "{:<12} {:<17} {:<17} {:.3} ({:.2}) {:.3} ({:.2}) {:.3} ({:.3}) {:>4} ({:>3}) {:>6.2} {:.3} ({:.2}) {} {:>5.2} {:>7.0} {:>5}",
                    ds.short,
                    MODELS[model],
                    METHODS[method],
                    s.exec as f64 / n,
                    tg.ter[model][method],
                    s.fed as f64 / n,
                    tg.mean_fed[model][method],
                    s.auc / n,
                    tg.auc[model][method],
                    fail as f64 / k,
                    tg.fail[model][method],
                    if fail > 0 { s.fail_success as f64 / fail as f64 } else { 0.0 },
                    s.success as f64 / n,
                    tg.success[model][method],
                    pec,
                    s.horizon as f64 / n,
                    s.tokens as f64 / n,
                    ratio
                );
            }
        }
    }
}
