//! One drive: a pool of internal units, a write buffer, and the read/program
//! conflict of NAND. See the module docs of [`crate::nvme`] for the model.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, RngExt};

use super::params::{DriveParams, PIECE_BYTES, SERVICE_JITTER};
use super::{IoDirection, Slowdown};

/// Unit time of one request in one direction: `units x (op + bytes x
/// per_byte)` nanoseconds in all, shared evenly by its pieces.
#[derive(Clone, Debug, PartialEq)]
struct Cost {
    op_ns: f64,
    ns_per_byte: f64,
}

impl Cost {
    /// Per-request and per-byte costs such that a saturated drive does
    /// `iops` 4 KiB requests and `bytes_per_s` with large ones.
    fn new(iops: f64, bytes_per_s: f64) -> Cost {
        let ns_per_byte = 1e9 / bytes_per_s;
        Cost {
            op_ns: (1e9 / iops - PIECE_BYTES as f64 * ns_per_byte).max(0.0),
            ns_per_byte,
        }
    }

    /// Unit time of a request of `bytes` on one unit of `units`.
    fn unit_time(&self, units: usize, bytes: u64) -> f64 {
        units as f64 * (self.op_ns + bytes.max(PIECE_BYTES) as f64 * self.ns_per_byte)
    }
}

/// The derived constants of a drive.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DriveModel {
    /// Internal units (requests in service at once).
    pub(super) units: usize,
    read: Cost,
    write: Cost,
    /// Latency after the units for a read (controller, PCIe, completion path).
    read_fixed_ns: f64,
    /// The same for an unbuffered write.
    write_fixed_ns: f64,
    /// Front-end latency of a buffered 4 KiB write.
    write_latency_ns: f64,
    write_buffer_ns: u64,
    stall_ns: f64,
    link_ns_per_byte: f64,
    /// How much longer than its service a request holds its units: `1 /
    /// share` for a share of the device (1 for the whole device).
    hold: f64,
}

impl DriveModel {
    pub(super) fn new(params: &DriveParams) -> DriveModel {
        let rates = [
            params.read_iops,
            params.read_bytes_per_s,
            params.write_iops,
            params.write_bytes_per_s,
            params.link_bytes_per_s,
        ];
        assert!(
            rates.iter().all(|rate| rate.is_finite() && *rate > 0.0),
            "drive {}: rates must be positive",
            params.name
        );
        let read_latency = params.read_latency_ns as f64;
        // Little's law at the onset of saturation: the requests a drive
        // holds when it first reaches its IOPS at QD1 latency.
        let units = ((params.read_iops * read_latency / 1e9).floor() as usize).max(1);
        let read = Cost::new(params.read_iops, params.read_bytes_per_s);
        let write = Cost::new(params.write_iops, params.write_bytes_per_s);
        let read_fixed_ns = (read_latency - read.unit_time(units, PIECE_BYTES)).max(0.0);
        let write_latency_ns = params.write_latency_ns as f64;
        let write_fixed_ns = (write_latency_ns - write.unit_time(units, PIECE_BYTES)).max(0.0);
        DriveModel {
            units,
            read,
            write,
            read_fixed_ns,
            write_fixed_ns,
            write_latency_ns,
            write_buffer_ns: params.write_buffer_ns,
            stall_ns: params.program_read_stall_ns as f64,
            link_ns_per_byte: 1e9 / params.link_bytes_per_s,
            hold: 1.0,
        }
    }

    /// The model of a `share` (in (0, 1]) of the drive: requests are
    /// served as fast, but hold their units `1 / share` times as long.
    pub(super) fn shared(mut self, share: f64) -> DriveModel {
        assert!(share > 0.0 && share <= 1.0, "a share is in (0, 1]");
        self.hold = 1.0 / share;
        self
    }

    /// The model of the drive degraded by `slowdown` (checked by the
    /// caller). Times of media work are divided by the throughput factor:
    /// the unit costs (so the saturated IOPS and bandwidth scale by it), the
    /// program stall (a slower die programs longer) and the write-buffer
    /// window (the buffer holds as many bytes, which take longer to program;
    /// a window of 0, no buffer, stays 0). Times outside the units are
    /// multiplied by the latency factor: the fixed read and unbuffered-write
    /// latency and a buffered write's whole acknowledgement path (front-end
    /// latency and host-link transfer). `units` (the drive's parallelism;
    /// the unit states are sized by it) and `hold` (the share) stay. With
    /// factors of 1 every product and quotient is exact, so the model is
    /// unchanged bit for bit.
    pub(super) fn slowed(mut self, slowdown: Slowdown) -> DriveModel {
        let Slowdown {
            latency_factor: latency,
            throughput_factor: throughput,
        } = slowdown;
        for cost in [&mut self.read, &mut self.write] {
            cost.op_ns /= throughput;
            cost.ns_per_byte /= throughput;
        }
        self.stall_ns /= throughput;
        self.write_buffer_ns = (self.write_buffer_ns as f64 / throughput).round() as u64;
        self.read_fixed_ns *= latency;
        self.write_fixed_ns *= latency;
        self.write_latency_ns *= latency;
        self.link_ns_per_byte *= latency;
        self
    }
}

/// A drive's state: when each unit frees, and whether its latest work is a
/// program (a write's media work).
#[derive(Clone, Debug)]
pub(super) struct DriveState {
    free_at: Vec<u64>,
    /// Every unit once, keyed `(free_at, unit)`: the units that free first
    /// come off the top (a scan of all units per request was a tenth of
    /// the 40-node benchmark's instructions; i3's drive has 74 units).
    by_free_at: BinaryHeap<Reverse<(u64, u32)>>,
    /// When each unit's program ends, 0 if its latest work is a read.
    program_end: Vec<u64>,
    /// At least the latest `program_end` (not lowered when a read takes a
    /// unit over): no program runs after it.
    programs_end_by: u64,
}

/// `(1 - a) + a * Exp(1)`: mean 1, a short exponential tail.
fn jitter<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let uniform: f64 = rng.random();
    (1.0 - SERVICE_JITTER) - SERVICE_JITTER * (1.0 - uniform).ln()
}

impl DriveState {
    pub(super) fn new(model: &DriveModel) -> DriveState {
        DriveState {
            free_at: vec![0; model.units],
            by_free_at: (0..model.units as u32)
                .map(|unit| Reverse((0, unit)))
                .collect(),
            program_end: vec![0; model.units],
            programs_end_by: 0,
        }
    }

    /// Serves `bytes` in `direction` arriving at `t0` (ns); returns when the
    /// host sees it complete (ns). `scratch` is reused for unit selection.
    pub(super) fn serve<R: Rng + ?Sized>(
        &mut self,
        model: &DriveModel,
        t0: u64,
        direction: IoDirection,
        bytes: u64,
        rng: &mut R,
        scratch: &mut Vec<usize>,
    ) -> u64 {
        let units = model.units;
        let pieces = (bytes.max(1).div_ceil(PIECE_BYTES) as usize).min(units);
        let cost = match direction {
            IoDirection::Read => &model.read,
            IoDirection::Write => &model.write,
        };
        let per_piece = cost.unit_time(units, bytes) / pieces as f64;
        self.choose_units(pieces, scratch);
        let stall = match direction {
            IoDirection::Read if model.stall_ns > 0.0 => {
                self.program_stall(model, t0, scratch, rng)
            }
            _ => 0.0,
        };
        let writing = direction == IoDirection::Write;
        let mut end = t0;
        for &unit in scratch.iter() {
            let start = self.free_at[unit].max(t0);
            let service = per_piece * jitter(rng);
            let finish = start + service.round() as u64;
            let free_at = start + (service * model.hold).round() as u64;
            self.free_at[unit] = free_at;
            self.by_free_at.push(Reverse((free_at, unit as u32)));
            if writing {
                self.program_end[unit] = free_at;
                self.programs_end_by = self.programs_end_by.max(free_at);
            } else {
                self.program_end[unit] = 0;
            }
            end = end.max(finish);
        }
        match direction {
            IoDirection::Read => end + (model.read_fixed_ns + stall).round() as u64,
            IoDirection::Write if model.write_buffer_ns == 0 => {
                end + model.write_fixed_ns.round() as u64
            }
            IoDirection::Write => {
                let transfer = bytes.saturating_sub(PIECE_BYTES) as f64 * model.link_ns_per_byte;
                let front = t0 + (model.write_latency_ns * jitter(rng) + transfer).round() as u64;
                front.max(end.saturating_sub(model.write_buffer_ns))
            }
        }
    }

    /// Puts in `scratch` the `pieces` units that free first (ties to the
    /// lower index), in that order, taking them out of `by_free_at` (the
    /// caller puts them back with their new times): the controller
    /// dispatches to whichever unit is free.
    fn choose_units(&mut self, pieces: usize, scratch: &mut Vec<usize>) {
        scratch.clear();
        for _ in 0..pieces {
            let Reverse((free_at, unit)) = self.by_free_at.pop().expect("a unit per piece");
            debug_assert_eq!(free_at, self.free_at[unit as usize]);
            scratch.push(unit as usize);
        }
    }

    /// The wait of a read behind a program on its die: with probability the
    /// fraction of units programming when the read starts, a uniform wait
    /// up to the drive's stall bound.
    fn program_stall<R: Rng + ?Sized>(
        &self,
        model: &DriveModel,
        t0: u64,
        chosen: &[usize],
        rng: &mut R,
    ) -> f64 {
        let start = chosen
            .iter()
            .map(|&unit| self.free_at[unit].max(t0))
            .min()
            .unwrap_or(t0);
        if self.programs_end_by <= start {
            return 0.0;
        }
        let programming = self.program_end.iter().filter(|&&end| end > start).count();
        if programming == 0 {
            return 0.0;
        }
        let fraction = programming as f64 / model.units as f64;
        let uniform: f64 = rng.random();
        if uniform < fraction {
            uniform / fraction * model.stall_ns
        } else {
            0.0
        }
    }
}
