//! Pairing tool calls with the replies that answer them: one implementation for every reader
//! whose log is a list of messages (transcripts, tau-bench, tau2, Inspect, ToolSandbox).
//!
//! A log is read as a sequence of turns: messages that make calls and messages that reply.
//! The rules, in the order of the log:
//! - a reply that names a call id answers the earliest call before it with that id that no
//!   reply has answered yet (logs reuse ids within one trajectory — tau-bench's historical
//!   files do — so "first unanswered" pairs them as the run did); with no such call it
//!   answers nothing;
//! - a reply that names no id answers the earliest unanswered call before it, whatever its id
//!   (a log that keeps replies in call order without ids: paired by position, and counted so a
//!   reader can say so);
//! - a call no reply answers stays unanswered (each reader decides what that means; a
//!   transcript rejects it).
//!
//! User-side calls (tau2's `requestor: "user"`) take part in the pairing — their replies must
//! not answer the agent's calls — and the reader leaves them out of the steps.

use std::collections::{BTreeSet, HashMap, VecDeque};

/// One turn of a log, as the pairing sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn<'a> {
    /// A call, with its id when it has one.
    Call(Option<&'a str>),
    /// A reply, naming the call it answers when it does.
    Reply(Option<&'a str>),
}

/// How one call was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    /// The position (in the turns) of the reply.
    pub reply: usize,
    /// The reply named no id: paired by position.
    pub positional: bool,
}

/// For each turn that is a call (same positions as `turns`; `None` for replies and for calls
/// no reply answers), the reply that answers it.
pub(crate) fn pair(turns: &[Turn<'_>]) -> Vec<Option<Answer>> {
    let mut answers: Vec<Option<Answer>> = vec![None; turns.len()];
    // Unanswered calls in order, and per id; a call answered through one index is removed from
    // the other lazily (skipped when met).
    let mut open: BTreeSet<usize> = BTreeSet::new();
    let mut by_id: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, turn) in turns.iter().enumerate() {
        match *turn {
            Turn::Call(id) => {
                open.insert(i);
                if let Some(id) = id {
                    by_id.entry(id).or_default().push_back(i);
                }
            }
            Turn::Reply(Some(id)) => {
                let Some(queue) = by_id.get_mut(id) else {
                    continue;
                };
                while let Some(&call) = queue.front() {
                    queue.pop_front();
                    if open.remove(&call) {
                        answers[call] = Some(Answer {
                            reply: i,
                            positional: false,
                        });
                        break;
                    }
                }
            }
            Turn::Reply(None) => {
                if let Some(call) = open.pop_first() {
                    answers[call] = Some(Answer {
                        reply: i,
                        positional: true,
                    });
                }
            }
        }
    }
    answers
}

/// [`pair`] over a list of messages: `calls` gives the ids of a message's calls (none for a
/// message that makes no call), `reply` whether a message is a reply (and the id it names).
/// For message `i`, the message answering each of its calls, in order.
pub(crate) fn pair_messages<'a, M>(
    messages: &'a [M],
    calls: impl Fn(&'a M) -> Vec<Option<&'a str>>,
    reply: impl Fn(&'a M) -> Option<Option<&'a str>>,
) -> Vec<Vec<Option<usize>>> {
    let mut turns = Vec::new();
    let mut owner = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for id in calls(m) {
            turns.push(Turn::Call(id));
            owner.push(i);
        }
        if let Some(id) = reply(m) {
            turns.push(Turn::Reply(id));
            owner.push(i);
        }
    }
    let mut out: Vec<Vec<Option<usize>>> = vec![Vec::new(); messages.len()];
    for ((turn, answer), &i) in turns.iter().zip(pair(&turns)).zip(&owner) {
        if let Turn::Call(_) = turn {
            out[i].push(answer.map(|a| owner[a.reply]));
        }
    }
    out
}

/// [`pair_messages`] for a chat log: the calls of `assistant` messages (their ids, in order)
/// and the `tool` messages as replies (the id each names).
pub(crate) fn pair_chat<'a, M>(
    messages: &'a [M],
    role: impl Fn(&'a M) -> &'a str,
    call_ids: impl Fn(&'a M) -> Vec<Option<&'a str>>,
    reply_id: impl Fn(&'a M) -> Option<&'a str>,
) -> Vec<Vec<Option<usize>>> {
    pair_messages(
        messages,
        |m| match role(m) {
            "assistant" => call_ids(m),
            _ => Vec::new(),
        },
        |m| (role(m) == "tool").then(|| reply_id(m)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replies(turns: &[Turn<'_>]) -> Vec<Option<(usize, bool)>> {
        pair(turns)
            .into_iter()
            .zip(turns)
            .filter(|(_, t)| matches!(t, Turn::Call(_)))
            .map(|(a, _)| a.map(|a| (a.reply, a.positional)))
            .collect()
    }

    #[test]
    fn by_id_first_unanswered() {
        use Turn::*;
        // Reused ids pair in order; a reply before its call answers nothing.
        let t = [
            Reply(Some("a")),
            Call(Some("a")),
            Call(Some("b")),
            Reply(Some("b")),
            Reply(Some("a")),
            Call(Some("a")),
            Reply(Some("a")),
            Call(Some("c")),
        ];
        assert_eq!(
            replies(&t),
            [Some((4, false)), Some((3, false)), Some((6, false)), None]
        );
    }

    #[test]
    fn positional_replies() {
        use Turn::*;
        let t = [
            Call(Some("x")),
            Call(None),
            Reply(None),
            Reply(None),
            Reply(None),
            Call(Some("y")),
        ];
        assert_eq!(replies(&t), [Some((2, true)), Some((3, true)), None]);
        // An id reply takes its call out of the positional queue.
        let t = [
            Call(Some("x")),
            Call(Some("y")),
            Reply(Some("x")),
            Reply(None),
        ];
        assert_eq!(replies(&t), [Some((2, false)), Some((3, true))]);
    }
}
