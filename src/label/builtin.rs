//! The built-in labelling rules: one table, read by [`super::Labeller`].
//!
//! The labels follow the paper's definitions of an executable action (§2), as
//! `shared/spec/metrics.md` spells them out: the tool is exposed and its arguments fit its
//! schema and validators (**schema**); every referenced intermediate value — an id, a path —
//! exists and is current (**dependency**); every explicit precondition holds in the state before
//! the action — a mode, a status, a login, a permission, a balance, seat count or capacity that
//! suffices, amounts that add up (**precondition**); the action assumes the current state, not
//! one before or after it — "already", an entity no longer available (**state**); the
//! information the action needs was available to the agent (**information**).
//! Faults of the environment itself are **environment**, kept apart from the five.
//!
//! When several rules match, the verdict decides (environment, then the tie-break order), then
//! the order below. Patterns are case-insensitive regular expressions; docs/metrics.md lists the
//! rules with real messages from each benchmark, and `tests/labels_released.rs` measures their
//! coverage on released runs.

use std::sync::OnceLock;

use super::{Reference, Rule, RuleSpec};

/// One row of the table (a [`RuleSpec`] with static strings).
pub struct Row {
    pub id: &'static str,
    pub label: &'static str,
    pub error: Option<&'static str>,
    pub tool: Option<&'static str>,
    pub except_tool: Option<&'static str>,
    pub termination: Option<&'static str>,
    pub no_tool: Option<bool>,
    pub reference: Option<Reference>,
    pub rationale: &'static str,
}

const fn row(id: &'static str, label: &'static str, error: &'static str, why: &'static str) -> Row {
    Row {
        id,
        label,
        error: Some(error),
        tool: None,
        except_tool: None,
        termination: None,
        no_tool: None,
        reference: None,
        rationale: why,
    }
}

/// Tools that look something up by the agent's keys: finding nothing means the agent's
/// information did not match, not that a reference went stale.
const LOOKUP_TOOLS: &str = r"^(find|search|lookup|query)|_by_|^get_user_id$";

/// "The referenced thing does not exist" in the benchmarks' words.
const NOT_FOUND: &str = r"not found|no such file|no such directory|does not exist|doesn't exist|could not find|cannot find|can't find|not registered|KeyError|IndexError|index out of range";

/// The table. Order matters only between rules of the same verdict.
pub const RULES: &[Row] = &[
    // Environment faults: not the agent's.
    row("env.unavailable", "environment",
        r"(http|status|error code|status code)\D{0,4}\b50[0-4]\b|\b50[0-4] (service|bad|gateway|internal)|service unavailable|bad gateway|gateway time-?out|internal server error|InternalServerError|server overloaded|\boverloaded_error\b",
        "the service answered with a server error (5xx, unavailable): the environment failed, not the action"),
    row("env.harness_call_id", "environment",
        r"call_[0-9a-z_]*-[0-9a-z_-]*_parameters\s*=",
        "the harness pasted a tool-call id holding '-' into Python code as a variable name (ToolSandbox), so the code cannot parse whatever the agent sent"),
    row("env.timeout", "environment",
        r"timed out|time-out error|timeout ?error|APITimeoutError|deadline exceeded|read timeout|connect timeout|request timeout",
        "the call timed out: the environment did not answer, so the action was never judged"),
    row("env.rate_limit", "environment",
        r"rate[ _-]?limit|too many requests|(http|status|error code|status code)\D{0,4}\b429\b|quota exceeded",
        "the service refused the call for load (rate limit, 429): not a fault of the action"),
    row("env.connection", "environment",
        r"connection (reset|refused|aborted)|ECONNRESET|ECONNREFUSED|broken pipe|APIConnectionError",
        "the connection to the service broke: the environment failed, not the action"),
    Row {
        id: "env.infrastructure",
        label: "environment",
        error: None,
        tool: None,
        except_tool: None,
        termination: Some(r"infrastructure|harness|api_error|inference_error"),
        no_tool: Some(true),
        reference: None,
        rationale: "the run ended on an infrastructure or inference error (the model call itself crashed) before the agent made any tool call: no action of the agent's was judged",
    },
    // Schema: the tool is not exposed, or the arguments do not bind or fail a validator.
    row("schema.unknown_tool", "schema",
        r"unknown (action|tool|function)|no such (tool|function)|\b(tool|function) '?[\w.-]*'? (does not exist|not found|is not available)|not a valid (tool|function)|invalid (tool|function) name",
        "the called tool is not one the agent was given"),
    row("schema.signature", "schema",
        r"unexpected keyword argument|missing \d+ required (positional |keyword-only )?arguments?|takes \d+ positional arguments? but \d+ (were|was) given|got multiple values for (keyword )?argument|missing required (argument|parameter)",
        "the arguments do not bind to the tool's signature (an unknown or missing parameter)"),
    row("schema.type", "schema",
        r"is of type .{0,40} but expected|must be (of type|an? (integer|int|string|str|number|float|boolean|bool|list|dict|array|object)\b)|invalid literal for int|could not convert string to float|expected (type )?(str|int|float|bool|list|dict|string|integer|number)\b.{0,20}(got|but|found)|unsupported operand type|not supported between instances",
        "an argument has the wrong type for the tool's parameter"),
    row("schema.syntax", "schema",
        r"invalid syntax|SyntaxError|unterminated string|unexpected EOF|EOL while scanning|cannot assign to|leading zeros in decimal|code was incomplete|IndentationError|unexpected indent|was never closed|unmatched '",
        "the call itself does not parse (malformed call text)"),
    row("schema.json", "schema",
        r"JSONDecodeError|Expecting (value|property name|',' delimiter|':' delimiter)|invalid json|not valid json|Extra data: line",
        "the call's arguments are not valid JSON"),
    row("schema.validation", "schema",
        r"validation errors? for|Field required|Input should be|extra (fields|inputs) (are )?not permitted|value is not a valid",
        "the arguments fail the tool's argument validation (missing field, wrong value kind)"),
    row("schema.range", "schema",
        r"(smaller|larger|greater|less) than its valid range|valid range (minimum|maximum)|out of (the )?valid range|must be (positive|non-negative|between \S+ and)",
        "an argument is outside the range the tool's validator allows"),
    row("schema.value_format", "schema",
        r"invalid (\w+ ){0,3}(code|format|character|characters|value|argument|parameter|date|time|email|phone number)\b|NumberParseException|Unsupported path|path not allowed|only one folder level|does not match (the )?(format|pattern)",
        "an argument's value has a form the tool's validator rejects (a code, a path, a format)"),
    row("schema.no_criteria", "schema",
        r"no search criteria (are|is) given|at least one (search )?(criteria|criterion|argument|parameter) (should|must) be (provided|given|specified)",
        "the call gives none of the criteria the tool requires at least one of: an argument-binding check (the information reading, that the agent had no criterion to give, ranks after schema in the tie-break)"),
    // Dependency: a referenced id or path does not resolve.
    Row {
        id: "dependency.stale_reference",
        label: "dependency",
        error: Some(NOT_FOUND),
        tool: None,
        except_tool: Some(LOOKUP_TOOLS),
        termination: None,
        no_tool: None,
        reference: Some(Reference::Seen),
        rationale: "the call refers to an id or path an earlier accepted step used, and it no longer resolves",
    },
    Row {
        id: "dependency.missing_reference",
        label: "dependency",
        error: Some(NOT_FOUND),
        tool: None,
        except_tool: Some(LOOKUP_TOOLS),
        termination: None,
        no_tool: None,
        reference: None,
        rationale: "the call refers to an id or path that does not exist; the log (no tool outputs or user turns) cannot tell a wrong carried-over reference (dependency) from one never given (information), so the tie-break picks dependency",
    },
    // Precondition: an explicit prerequisite of the action does not hold in the current state.
    row("precondition.service_off", "precondition",
        r"(wifi|wi-fi|cellular|location|bluetooth|cellular service|location service)( service)? is not enabled|is (not enabled|disabled)\b|must be (enabled|turned on|switched on)|not (turned|switched) on",
        "a service the action needs is off; another action (turning it on) must come first"),
    row("precondition.low_battery", "precondition",
        r"low battery mode",
        "the device is in low battery mode, which the action requires to be off"),
    row("precondition.vehicle", "precondition",
        r"(needs|need|has|have|must) to be (pressed|locked|closed|released|engaged)|must be (pressed|locked|closed|released|engaged)|doors must be locked|brake pedal",
        "a prerequisite vehicle state (brake pressed, doors locked) does not hold before the action"),
    row("precondition.login", "precondition",
        r"not (authenticated|logged in|signed in)|please log ?in|log ?in (first|required)|authentication required|login required|unauthori[sz]ed",
        "the action requires a login that has not happened"),
    row("precondition.status", "precondition",
        r"must be (suspended|active|delivered|pending|processed|paid|activated)\b|non-(delivered|pending|active|suspended)\b.{0,40}cannot|cannot be (cancelled|canceled|modified|exchanged|returned|resumed|refunded)|is not (pending|delivered|active|suspended|eligible)|not eligible for",
        "the object is not in the status the action requires (e.g. an order must be delivered to exchange it)"),
    row("precondition.permission", "precondition",
        r"PermissionError|permission denied|not allowed to|is not permitted to|\bis not allowed\b|security violation",
        "the environment does not permit the action in its current state (a permission the action needs is missing: a sandbox refusing a command is one)"),
    row("precondition.amounts", "precondition",
        r"does not add up|(do|does) not match (the )?(total|price|amount|balance)",
        "the amounts in the call do not add up to what the tool requires (metrics.md: amounts that do not add up are a precondition)"),
    row("precondition.insufficient", "precondition",
        r"not enough (balance|funds|seats|money|credit|points|stock|inventory|capacity|fuel)|insufficient (balance|funds|seats|credit|stock)|balance is not enough|above the (tank )?capacity|exceeds? the (available )?(balance|capacity|limit)|sold out|fully booked",
        "a balance, seat count, capacity or quota the action needs is insufficient in the current state (metrics.md: a precondition)"),
    // State: the environment does not accept the transition from its current state.
    row("state.already", "state",
        r"\balready\b|duplicate",
        "the action would repeat a change the current state already has"),
    row("state.unavailable", "state",
        r"not available on date|(no longer|not) available\b",
        "the requested object is not available in the current state"),
    // Information: the agent lacked the information the action needed.
    Row {
        id: "information.lookup_empty",
        label: "information",
        error: Some(r"not found|no (match|matches|matching|results?)\b|does not exist"),
        tool: Some(LOOKUP_TOOLS),
        except_tool: None,
        termination: None,
        no_tool: None,
        reference: None,
        rationale: "a lookup with the agent's keys (name, email, zip) found nothing: the agent's information did not identify the record",
    },
    row("information.nothing_for_keys", "information",
        r"\bno .{1,80} (is|are) available for\b|\bno .{1,80} matches the supplied\b",
        "the environment holds nothing for the values the agent supplied (AgentDojo-style `No … record is available for booking_id 'current'`): the agent acted on values it did not have"),
    row("information.contradicts_source", "information",
        r"does not match the .{0,80}(source|evidence)|must identify .{0,80}from the opened",
        "the value the agent supplied disagrees with the source it was to read (or had not opened): it acted on information it did not have"),
    row("information.no_match", "information",
        r"no available \w+|no (results|matches) found|NoDataError|nothing (found|matches)",
        "nothing matches the inputs the agent gave: the information it acted on does not identify anything"),
    Row {
        id: "information.no_tool",
        label: "information",
        error: None,
        tool: None,
        except_tool: None,
        termination: None,
        no_tool: Some(true),
        reference: None,
        rationale: "the agent ended the task without any tool call where one was needed: it never obtained or acted on the information the task required",
    },
];

impl Row {
    /// The row as a [`RuleSpec`].
    pub fn spec(&self) -> RuleSpec {
        RuleSpec {
            id: self.id.to_string(),
            label: self.label.to_string(),
            error: self.error.map(str::to_string),
            tool: self.tool.map(str::to_string),
            except_tool: self.except_tool.map(str::to_string),
            args: None,
            dataset: None,
            termination: self.termination.map(str::to_string),
            no_tool: self.no_tool,
            reference: self.reference,
            rationale: self.rationale.to_string(),
        }
    }
}

/// The table compiled once (the patterns are fixed; a test compiles every one).
pub fn compiled() -> &'static [Rule] {
    static RULES_COMPILED: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES_COMPILED.get_or_init(|| {
        RULES
            .iter()
            .map(|r| Rule::compile(r.spec(), false).expect("built-in label rules compile"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::label::{Facts, Labeller};

    /// (tool, error, reference): a failing step as the rules see it.
    type Case = (Option<&'static str>, &'static str, Reference);

    const fn c(tool: &'static str, error: &'static str) -> Case {
        (Some(tool), error, Reference::None)
    }

    /// Per rule: messages it must decide (real ones from released runs where there are any)
    /// and near-misses another rule (or none) must decide.
    fn examples(id: &str) -> (Vec<Case>, Vec<Case>) {
        let seen = |t, e| (Some(t), e, Reference::Seen);
        match id {
            "env.unavailable" => (
                vec![c("get_order", "503 Service Unavailable"), c("t", "InternalServerError: Error code: 500")],
                vec![
                    c("t", "Error: flight HAT503 not available"),
                    c("t", "Error: order #503 not found"),
                    c("t", "ConnectionError: Wifi is not enabled"),
                ],
            ),
            "env.harness_call_id" => (
                vec![c("set_wifi_status", "  File \"<input>\", line 1\n    call_0_e82db82e-9824-40e2-a611-58f3abc50d9d_parameters = {'on': False}\n    ^\nSyntaxError: invalid syntax\n")],
                vec![c("t", "  File \"<input>\", line 1\n    call_0_e82db82e_parameters = {'on': Fals\nSyntaxError: invalid syntax\n")],
            ),
            "env.timeout" => (
                vec![c("t", "APITimeoutError: Request timed out."), c("t", "ReadTimeout: read timeout=30")],
                vec![c("set_timer", "Error: timeout must be a positive integer")],
            ),
            "env.rate_limit" => (
                vec![
                    c("t", "RateLimitError: Error code: 429"),
                    c("t", "HTTP 429"),
                    c("t", "Too Many Requests"),
                ],
                vec![c("t", "Error: limit of 4 bags per passenger"), c("t", "Error: flight 429 is full")],
            ),
            "env.connection" => (
                vec![c("t", "ConnectionResetError: [Errno 104] Connection reset by peer")],
                vec![c("t", "ConnectionError: Cellular service is not enabled")],
            ),
            "schema.unknown_tool" => (
                vec![
                    c("think2", "Unknown action think2"),
                    c("t", "Error: tool 'foo' does not exist"),
                    c("google-cloud-logging_list_log_buckets", "Tool google-cloud-logging_list_log_buckets not found in agent Assistant"),
                ],
                vec![c("get_order", "Error: Order not found")],
            ),
            "schema.signature" => (
                vec![
                    c("ls", "Error during execution: GorillaFileSystem.ls() got an unexpected keyword argument 'folder'"),
                    c("t", "TypeError: got an unexpected keyword argument 'location'"),
                    c("t", "TypeError: f() missing 1 required positional argument: 'x'"),
                ],
                vec![c("t", "Error: missing reservation")],
            ),
            "schema.type" => (
                vec![c("t", "TypeError: Parameter 'days' is of type '<class 'float'>', but expected '<class 'int'>'.")],
                vec![c("t", "Error: wrong type of cabin for this flight")],
            ),
            "schema.syntax" => (
                vec![
                    c("view_messages_sent", "Error during execution: invalid syntax (<string>, line 1)"),
                    c("t", "  File \"<input>\", line 1\n    x = = 1\nSyntaxError: invalid syntax\n"),
                    c("t", "SyntaxError: leading zeros in decimal integer literals are not permitted"),
                ],
                vec![c("t", "Error: syntax of the address is not supported by the carrier")],
            ),
            "schema.json" => (
                vec![c("t", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)")],
                vec![c("t", "Error: json export failed for order #W1")],
            ),
            "schema.validation" => (
                vec![c("t", "1 validation error for BookReservation\npassengers.0.dob\n  Field required")],
                vec![c("t", "Error: the reservation requires validation by a supervisor")],
            ),
            "schema.range" => (
                vec![c("t", "ValueError: Parameter 'timestamp' is smaller than its valid range minimum of 315529200.0.")],
                vec![c("t", "Error: the price is smaller than expected")],
            ),
            "schema.value_format" => (
                vec![
                    c("book_flight", "{\"booking_status\": false, \"error\": \"Invalid departure airport code: Los Angeles\"}"),
                    c("cp", "{\"error\": \"cp: path not allowed in destination. Provide only a file or directory name.\"}"),
                    c("cd", "{\"error\": \"cd: /temp: Unsupported path. Only one folder level at a time is supported.\"}"),
                ],
                vec![c("t", "Error: invalidated booking cannot be changed")],
            ),
            "schema.no_criteria" => (
                vec![c("search_messages", "ValueError: No search criteria are given. At least one search criteria should be provided among ('message_id', 'sender_person_id')")],
                vec![c("search_contacts", "Error: no contact matches the given criteria")],
            ),
            "dependency.stale_reference" => (
                vec![seen("cat", "{\"error\": \"cat: 'notes.txt': No such file or directory\"}")],
                vec![c("cat", "{\"error\": \"cat: 'notes.txt': No such file or directory\"}")],
            ),
            "dependency.missing_reference" => (
                vec![
                    c("update_reservation_flights", "Error: payment method not found"),
                    c("retrieve_invoice", "{\"error\": \"Booking not found\"}"),
                    c("cd", "{\"error\": \"cd: 'tmp': No such file or directory\"}"),
                    c("book_flight", "{\"booking_status\": false, \"error\": \"Card not registered\"}"),
                    c("t", "KeyError: 'contact_7'"),
                ],
                vec![c("find_user_id_by_email", "Error: User not found")],
            ),
            "precondition.service_off" => (
                vec![c("search_location_around_lat_lon", "ConnectionError: Wifi is not enabled"), c("t", "PermissionError: Location service is not enabled.")],
                vec![c("set_wifi_status", "ValueError: wifi already enabled")],
            ),
            "precondition.low_battery" => (
                vec![c("set_cellular_service_status", "PermissionError: Cellular service cannot be turned on in low battery mode")],
                vec![c("get_battery", "Error: battery level unknown")],
            ),
            "precondition.vehicle" => (
                vec![
                    c("startEngine", "{\"error\": \"Brake pedal needs to be pressed when starting the engine.\"}"),
                    c("startEngine", "{\"error\": \"All doors must be locked before starting the engine. Here are the unlocked doors: driver\"}"),
                ],
                vec![c("lockDoors", "{\"error\": \"door name is unknown\"}")],
            ),
            "precondition.login" => (
                vec![c("create_ticket", "{\"error\": \"User not authenticated. Please log in to create a ticket.\"}")],
                vec![c("login", "Error: logged out successfully")],
            ),
            "precondition.status" => (
                vec![
                    c("resume_line", "Error: Line must be suspended to resume"),
                    c("exchange_delivered_order_items", "Error: Non-delivered order cannot be exchanged"),
                ],
                vec![c("t", "Error: status unknown")],
            ),
            "precondition.permission" => (
                vec![
                    c("t", "PermissionError: operation requires admin"),
                    c("run_command", "Security violation: Command 'kind' is not allowed"),
                ],
                vec![c("t", "Error: permissions listed")],
            ),
            "precondition.amounts" => (
                vec![c("book_reservation", "Error: payment amount does not add up, total price is 305, but paid 255")],
                vec![c("t", "Error: amount added")],
            ),
            "precondition.insufficient" => (
                vec![
                    c("update_reservation_flights", "Error: not enough seats on flight HAT290"),
                    c("update_reservation_flights", "Error: gift card balance is not enough"),
                    c("fillFuelTank", "{\"error\": \"Cannot fill gas above the tank capacity.\"}"),
                ],
                vec![c("t", "Error: enough is enough")],
            ),
            "state.already" => (
                vec![c("set_wifi_status", "ValueError: wifi already enabled")],
                vec![c("t", "Error: ready")],
            ),
            "state.unavailable" => (
                vec![c("update_reservation_flights", "Error: flight HAT030 not available on date 2024-05-13")],
                vec![c("t", "Error: availability unknown")],
            ),
            "information.lookup_empty" => (
                vec![
                    c("find_user_id_by_email", "Error: User not found"),
                    c("get_user_id", "{\"error\": \"User 'John Levy' not found in the workspace.\"}"),
                ],
                vec![c("get_order_details", "Error: Order not found")],
            ),
            "information.nothing_for_keys" => (
                vec![
                    c("get_assistance_phase", "ValueError: No assistance phase record is available for booking_id 'current'."),
                    c("validate", "ValueError: No passport_destination_validations record matches the supplied evidence chain"),
                ],
                vec![c("t", "Error: flight HAT030 not available on date 2024-05-13")],
            ),
            "information.contradicts_source" => (
                vec![
                    c("submit", "ValueError: The supplied excluded_destination_type does not match the supported evidence category. Review the opened official source"),
                    c("submit", "ValueError: arrangement_rule_section must identify the relevant section heading from the opened official PG&E page."),
                ],
                vec![c("t", "Error: payment amount does not match the total")],
            ),
            "information.no_match" => (
                vec![
                    c("get_flight_cost", "Error during execution: No available route for the given airports."),
                    c("t", "polars.exceptions.NoDataError: empty CSV"),
                ],
                vec![c("t", "Error: route is available")],
            ),
            "information.no_tool" => (vec![], vec![c("t", "")]),
            "env.infrastructure" => (vec![], vec![c("t", "infrastructure")]),
            other => panic!("no examples for rule {other}"),
        }
    }

    fn decide(case: &Case) -> Option<String> {
        let facts = Facts {
            tool: case.0,
            error: Some(case.1),
            reference: case.2,
            ..Facts::default()
        };
        Labeller::builtin()
            .decide(&facts)
            .map(|r| r.spec.id.clone())
    }

    #[test]
    fn every_rule_decides_its_examples_and_not_its_near_misses() {
        for row in RULES {
            let (pos, neg) = examples(row.id);
            for case in &pos {
                assert_eq!(decide(case).as_deref(), Some(row.id), "{case:?}");
            }
            for case in &neg {
                assert_ne!(decide(case).as_deref(), Some(row.id), "{case:?}");
            }
            assert!(!neg.is_empty(), "rule {} needs a negative example", row.id);
            assert!(
                !pos.is_empty() || row.no_tool == Some(true),
                "rule {} needs examples",
                row.id
            );
        }
    }

    /// A remembered decision is the rules' own: every example decided once, again (from the
    /// memo), and by a labeller with user rules in front, gives what running the rules gives;
    /// past the memo's bound decisions are still made.
    #[test]
    fn remembered_decisions_are_the_rules_decisions() {
        let user = crate::label::LabelSettings {
            builtin: true,
            rules: vec![crate::label::RuleSpec {
                id: "mine".into(),
                label: "state".into(),
                error: Some("not found|503".into()),
                tool: None,
                except_tool: None,
                args: None,
                dataset: None,
                termination: None,
                no_tool: None,
                reference: None,
                rationale: "test".into(),
            }],
        };
        for l in [Labeller::builtin(), Labeller::new(&user).unwrap()] {
            let fresh = l.clone();
            let mut facts = Vec::new();
            for row in RULES {
                let (pos, neg) = examples(row.id);
                for (tool, error, reference) in pos.into_iter().chain(neg) {
                    for no_tool in [false, true] {
                        facts.push(Facts {
                            tool,
                            error: Some(error),
                            reference,
                            no_tool,
                            ..Facts::default()
                        });
                    }
                }
            }
            let id = |r: Option<&crate::label::Rule>| r.map(|r| r.spec.id.clone());
            for f in facts.iter().chain(&facts) {
                assert_eq!(id(l.decide(f)), id(fresh.decide_now(f)), "{f:?}");
            }
        }
        // Beyond the bound: not remembered, still decided.
        let l = Labeller::builtin();
        let texts: Vec<String> = (0..super::super::Decided::MAX_ENTRIES + 10)
            .map(|i| format!("Error: order #{i} not found"))
            .collect();
        for t in texts.iter().chain(&texts) {
            let f = Facts {
                tool: Some("get_order"),
                error: Some(t),
                ..Facts::default()
            };
            assert_eq!(id_of(l.decide(&f)), id_of(l.decide_now(&f)));
        }
        let long = "x".repeat(10_000) + " 503 Service Unavailable";
        let f = Facts {
            error: Some(&long),
            ..Facts::default()
        };
        assert_eq!(id_of(l.decide(&f)).as_deref(), Some("env.unavailable"));
    }

    /// Trying the rules by rank and stopping at the first match decides as running every rule
    /// and taking the best-ranked match (the earliest in its table on a tie) does: every
    /// example and near-miss of every rule, with each reference and no-tool setting, through
    /// the built-in table and through a user table whose rules are out of rank order.
    #[test]
    fn the_first_match_by_rank_is_the_best_match() {
        fn best<'r>(
            rules: &'r [crate::label::Rule],
            f: &Facts<'_>,
        ) -> Option<&'r crate::label::Rule> {
            rules
                .iter()
                .filter(|r| r.matches(f))
                .min_by_key(|r| r.verdict.rank())
        }
        let spec = |id: &str, label: &str, error: &str| crate::label::RuleSpec {
            id: id.into(),
            label: label.into(),
            error: Some(error.into()),
            tool: None,
            except_tool: None,
            args: None,
            dataset: None,
            termination: None,
            no_tool: None,
            reference: None,
            rationale: "test".into(),
        };
        let user = crate::label::LabelSettings {
            builtin: true,
            rules: vec![
                spec("u.info", "information", "not found|error"),
                spec("u.state", "state", "not found|503"),
                spec("u.env", "environment", "unavailable"),
                spec("u.state2", "state", "not"),
            ],
        };
        let l = Labeller::new(&user).unwrap();
        let mut decided = 0;
        for row in RULES {
            let (pos, neg) = examples(row.id);
            for (tool, error, _) in pos.into_iter().chain(neg) {
                for reference in [Reference::None, Reference::Seen] {
                    for no_tool in [false, true] {
                        let f = Facts {
                            tool,
                            error: Some(error),
                            reference,
                            no_tool,
                            ..Facts::default()
                        };
                        let want = best(&l.user, &f).or_else(|| best(&l.builtin, &f));
                        assert_eq!(id_of(l.decide_now(&f)), id_of(want), "{f:?}");
                        let builtin = Labeller::builtin();
                        assert_eq!(
                            id_of(builtin.decide_now(&f)),
                            id_of(best(&builtin.builtin, &f)),
                            "{f:?}"
                        );
                        decided += usize::from(want.is_some());
                    }
                }
            }
        }
        assert!(decided > 100, "{decided}");
    }

    fn id_of(r: Option<&crate::label::Rule>) -> Option<String> {
        r.map(|r| r.spec.id.clone())
    }

    #[test]
    fn a_rollout_without_tool_calls_gets_the_no_tool_rule_only() {
        let l = Labeller::builtin();
        let f = Facts {
            no_tool: true,
            ..Facts::default()
        };
        assert_eq!(l.decide(&f).unwrap().spec.id, "information.no_tool");
        let f = Facts {
            no_tool: false,
            ..Facts::default()
        };
        assert!(
            l.decide(&f).is_none(),
            "a step without error text is unlabeled"
        );
    }

    #[test]
    fn ids_are_unique_and_every_rule_compiles_and_explains_itself() {
        let mut ids = std::collections::HashSet::new();
        for r in compiled() {
            assert!(ids.insert(r.spec.id.clone()), "repeated id {}", r.spec.id);
            assert!(!r.spec.rationale.is_empty());
            assert!(r.spec.id.starts_with(r.verdict.as_str()) || r.spec.id.starts_with("env."));
        }
        assert_eq!(compiled().len(), RULES.len());
    }
}
