//! One harness for driving shards in tests: every CPU task and I/O
//! completes the moment it is asked for, and what leaves a shard (replies,
//! messages, share changes) is collected for the test to look at.
//!
//! A shard is a sans-IO state machine; something must carry out its
//! actions. The simulator does so with modelled time and hardware; a test
//! of the engine's own logic mostly wants the opposite, no time at all, so
//! that what it checks (which SSTables a read touches, when a memtable
//! flushes, what the coordinator answers) does not depend on a model.
//! [`run`] does that for one shard and [`run_cluster`] for several, routing
//! their messages to each other in the order they are sent. A test that
//! needs to stop something (hold a flush's writes to see writes throttle,
//! count digests, drop a node's messages) says so through the `watch`
//! callback, which sees every action before it is carried out.
//!
//! Time moves only in [`run_until`], which fires a shard's timers in order
//! up to a time the test chooses; elsewhere timers fire only when a test
//! calls `handle_timeout`.

use crate::action::{Action, ClientReply, IoRequest, Message, SchedulingGroup};
use crate::placement::ShardAddress;
use crate::shard::Shard;
use crate::SimTime;

/// What a watch callback decides about an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Carry it out as the harness does (complete the task or I/O, record
    /// the reply, deliver or record the message).
    Carry,
    /// An I/O is kept in [`Outcome::held`] instead of completing; a message
    /// is lost (recorded in [`Outcome::dropped`]). Other actions cannot be
    /// held: the harness panics, as a test asking for it is wrong.
    Hold,
}

/// What left the shards while the harness ran them.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Replies to clients, in the order they were sent.
    pub replies: Vec<ClientReply>,
    /// Messages carried out: sender, destination, message. [`run`] (one
    /// shard) records them without delivering; [`run_cluster`] delivers
    /// them too.
    pub sent: Vec<(ShardAddress, ShardAddress, Message)>,
    /// Messages the watch callback held back: lost.
    pub dropped: Vec<(ShardAddress, ShardAddress, Message)>,
    /// I/Os the watch callback held back, in submission order: the test
    /// completes them with `handle_io_done` when it wants.
    pub held: Vec<IoRequest>,
    /// Scheduling-group share changes the controllers asked for.
    pub shares: Vec<(SchedulingGroup, f64)>,
    /// Replays finished by restarted shards: (entries, bytes).
    pub replayed: Vec<(u64, u64)>,
    /// Stream plans received: (plan, rows, bytes).
    pub received: Vec<(u32, u64, u64)>,
}

/// Carries out `shard`'s actions at `now` until it has none left: CPU
/// tasks and I/Os complete at once unless `watch` holds an I/O; messages
/// are recorded in [`Outcome::sent`], not delivered (one shard).
pub fn run(
    shard: &mut Shard,
    now: SimTime,
    outcome: &mut Outcome,
    mut watch: impl FnMut(&Action) -> Verdict,
) {
    while let Some(action) = shard.poll_action() {
        let verdict = watch(&action);
        if let Some((from, to, message)) = carry(shard, now, action, verdict, outcome) {
            outcome.sent.push((from, to, message));
        }
    }
}

/// [`run`] with nothing held.
pub fn run_all(shard: &mut Shard, now: SimTime, outcome: &mut Outcome) {
    run(shard, now, outcome, |_| Verdict::Carry);
}

/// Carries out `shard`'s actions as [`run_all`] does, firing its timers in
/// order from `from` to `until` (each at its time, then what it asked for
/// at that time), until nothing is left to do by `until` or `stop`, asked
/// after each action, says to stop. Returns the time it stopped at.
pub fn run_until(
    shard: &mut Shard,
    from: SimTime,
    until: SimTime,
    outcome: &mut Outcome,
    mut stop: impl FnMut(&Shard) -> bool,
) -> SimTime {
    let mut now = from;
    loop {
        while let Some(action) = shard.poll_action() {
            if let Some(sent) = carry(shard, now, action, Verdict::Carry, outcome) {
                outcome.sent.push(sent);
            }
            if stop(shard) {
                return now;
            }
        }
        match shard.poll_timeout() {
            Some(at) if at <= until => {
                now = now.max(at);
                shard.handle_timeout(now);
            }
            _ => return now,
        }
    }
}

/// Carries out the actions of a cluster's shards at `now` until none has
/// any left, delivering each message to its destination in send order.
/// `shards` holds every shard of the cluster, node by node (index `node x
/// shards_per_node + shard`); `watch` sees each action with the index of
/// the shard that produced it.
pub fn run_cluster(
    shards: &mut [Shard],
    now: SimTime,
    outcome: &mut Outcome,
    mut watch: impl FnMut(usize, &Action) -> Verdict,
) {
    let per_node = shards[0].config().placement.shards_per_node();
    let mut progress = true;
    while progress {
        progress = false;
        for index in 0..shards.len() {
            while let Some(action) = shards[index].poll_action() {
                progress = true;
                let verdict = watch(index, &action);
                if let Some((from, to, message)) =
                    carry(&mut shards[index], now, action, verdict, outcome)
                {
                    outcome.sent.push((from, to, message.clone()));
                    let target = (to.node * per_node + to.shard) as usize;
                    shards[target].handle_message(now, from, message);
                }
            }
        }
    }
}

/// Carries out one action; returns a message to send on.
fn carry(
    shard: &mut Shard,
    now: SimTime,
    action: Action,
    verdict: Verdict,
    outcome: &mut Outcome,
) -> Option<(ShardAddress, ShardAddress, Message)> {
    match (action, verdict) {
        (Action::SubmitIo(io), Verdict::Hold) => outcome.held.push(io),
        (Action::SubmitIo(io), Verdict::Carry) => shard.handle_io_done(now, io.id),
        (Action::Send { to, message }, verdict) => {
            let sent = (shard.config().address, to, message);
            match verdict {
                Verdict::Carry => return Some(sent),
                Verdict::Hold => outcome.dropped.push(sent),
            }
        }
        (action, Verdict::Hold) => panic!("only I/Os and messages can be held: {action:?}"),
        (Action::RunCpu(task), Verdict::Carry) => shard.handle_cpu_done(now, task.id),
        (Action::Reply(reply), Verdict::Carry) => outcome.replies.push(reply),
        (Action::SetShares { group, shares }, Verdict::Carry) => {
            outcome.shares.push((group, shares))
        }
        (Action::Replayed { entries, bytes }, Verdict::Carry) => {
            outcome.replayed.push((entries, bytes))
        }
        (Action::StreamReceived { plan, rows, bytes }, Verdict::Carry) => {
            outcome.received.push((plan, rows, bytes))
        }
    }
    None
}
