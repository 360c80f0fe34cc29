//! Tests of the NVMe model. The calibration against published sweeps (R6,
//! io_properties) runs through `sim::device_sweep`, which drives the model
//! the way fio does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use units::{SimDuration, SimTime};

use super::*;

const READ_4K: IoOp = IoOp {
    direction: IoDirection::Read,
    bytes: 4096,
};

const WRITE_4K: IoOp = IoOp {
    direction: IoDirection::Write,
    bytes: 4096,
};

/// Figures of one closed loop.
#[derive(Debug)]
struct LoopFigures {
    /// Completions per second of the closed loop.
    iops: f64,
    /// Mean latency of the closed loop's requests, microseconds.
    mean_us: f64,
    /// Writes per second of the open-loop stream, if any.
    writes_per_s: f64,
}

/// `depth` slots each keep one `op` outstanding (no host time between a
/// completion and the next submission), while an open-loop stream submits
/// `background` every `1 / background_rate` seconds (none if the rate is 0).
/// Runs until the closed loop has completed `requests`.
fn closed_loop_with_background(
    profile: NvmeProfile,
    op: IoOp,
    depth: u64,
    requests: u64,
    background: IoOp,
    background_rate: f64,
) -> LoopFigures {
    let device = NvmeDevice::new(profile);
    closed_loop_on(device, op, depth, requests, background, background_rate)
}

/// [`closed_loop_with_background`] on a given (idle) device.
fn closed_loop_on(
    mut device: NvmeDevice,
    op: IoOp,
    depth: u64,
    requests: u64,
    background: IoOp,
    background_rate: f64,
) -> LoopFigures {
    const BACKGROUND_TAG: u64 = u64::MAX;
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut submitted_at = vec![SimTime::ZERO; depth as usize];
    // (time, 0 = completion / 1 = background arrival, tag)
    let mut events: BinaryHeap<Reverse<(SimTime, u8, u64)>> = BinaryHeap::new();
    for tag in 0..depth {
        let c = device.submit(SimTime::ZERO, tag, op, &mut rng).unwrap();
        events.push(Reverse((c.at, 0, c.tag)));
    }
    let interval =
        (background_rate > 0.0).then(|| SimDuration::from_secs_f64(1.0 / background_rate));
    if let Some(interval) = interval {
        events.push(Reverse((SimTime::ZERO + interval, 1, BACKGROUND_TAG)));
    }
    let warmup = requests / 10;
    let (mut done, mut latency_total, mut measured, mut background_done) = (0u64, 0.0, 0u64, 0u64);
    let mut measure_from = SimTime::ZERO;
    let mut now = SimTime::ZERO;
    while let Some(Reverse((at, kind, tag))) = events.pop() {
        now = at;
        if kind == 1 {
            let c = device
                .submit(now, BACKGROUND_TAG, background, &mut rng)
                .unwrap();
            events.push(Reverse((c.at, 0, c.tag)));
            events.push(Reverse((now + interval.unwrap(), 1, BACKGROUND_TAG)));
            continue;
        }
        assert_eq!(device.complete(now, &mut rng), None);
        if tag == BACKGROUND_TAG {
            if done >= warmup {
                background_done += 1;
            }
            continue;
        }
        done += 1;
        if done == warmup {
            measure_from = now;
        } else if done > warmup {
            latency_total += (now - submitted_at[tag as usize]).as_secs_f64();
            measured += 1;
        }
        if done == warmup + requests {
            break;
        }
        submitted_at[tag as usize] = now;
        let c = device.submit(now, tag, op, &mut rng).unwrap();
        events.push(Reverse((c.at, 0, c.tag)));
    }
    let seconds = (now - measure_from).as_secs_f64();
    LoopFigures {
        iops: measured as f64 / seconds,
        mean_us: latency_total / measured as f64 * 1e6,
        writes_per_s: background_done as f64 / seconds,
    }
}

fn closed_loop(profile: NvmeProfile, op: IoOp, depth: u64, requests: u64) -> LoopFigures {
    closed_loop_with_background(profile, op, depth, requests, WRITE_4K, 0.0)
}

fn within(value: f64, target: f64, tolerance: f64) -> bool {
    (value - target).abs() <= tolerance * target
}

/// Mean completion latency of `count` requests, each on an idle device, in
/// microseconds.
fn idle_latency_us(profile: &NvmeProfile, op: IoOp, count: u64) -> f64 {
    slowed_idle_latency_us(profile, Slowdown::NONE, op, count)
}

/// [`idle_latency_us`] on devices slowed by `slowdown`. Every call draws
/// the same random numbers, so two calls differ only by the slowdown.
fn slowed_idle_latency_us(profile: &NvmeProfile, slowdown: Slowdown, op: IoOp, count: u64) -> f64 {
    let mut rng = Pcg64Mcg::seed_from_u64(2);
    let total: u64 = (0..count)
        .map(|tag| {
            let mut device = NvmeDevice::new(profile.clone());
            device.set_slowdown(slowdown);
            device
                .submit(SimTime::ZERO, tag, op, &mut rng)
                .unwrap()
                .at
                .as_nanos()
        })
        .sum();
    total as f64 / count as f64 / 1e3
}

#[test]
fn every_preset_gives_its_datasheet_latency_at_qd1_and_its_iops_saturated() {
    for profile in NvmeProfile::presets() {
        let drive = profile.drive.clone();
        let name = drive.name;
        let read_qd1 = idle_latency_us(&profile, READ_4K, 2_000);
        let write_qd1 = idle_latency_us(&profile, WRITE_4K, 2_000);
        assert!(
            within(read_qd1, drive.read_latency_ns as f64 / 1e3, 0.02),
            "{name}: QD1 read {read_qd1} us"
        );
        assert!(
            within(write_qd1, drive.write_latency_ns as f64 / 1e3, 0.02),
            "{name}: QD1 write {write_qd1} us"
        );
        let read_loop = closed_loop(profile.clone(), READ_4K, 1, 5_000);
        assert!(
            within(read_loop.mean_us, read_qd1, 0.02),
            "{name}: {read_loop:?}"
        );
        let deep = 4 * u64::from(profile.channels());
        let read_deep = closed_loop(profile.clone(), READ_4K, deep, 50_000);
        let write_deep = closed_loop(profile.clone(), WRITE_4K, 256, 50_000);
        assert!(
            within(read_deep.iops, drive.read_iops, 0.02),
            "{name}: {read_deep:?}"
        );
        assert!(
            within(write_deep.iops, drive.write_iops, 0.02),
            "{name}: {write_deep:?}"
        );
    }
}

#[test]
fn without_a_write_buffer_a_write_completes_with_its_media_work() {
    let mut profile = NvmeProfile::optane_p4800x();
    profile.drive.write_buffer_ns = 0;
    // A lone 4 KiB write: the datasheet latency.
    let qd1 = idle_latency_us(&profile, WRITE_4K, 2_000);
    assert!(within(qd1, 10.0, 0.02), "{qd1} us");
    // A lone 1 MiB write waits for all of its media work: 1 MiB at 2.1 GB/s
    // split over the 4 units, times the mean of the slowest of 4 jitters
    // (1 + 0.05 x (1/2 + 1/3 + 1/4)), plus the fixed latency (2 us); a
    // buffered one is acknowledged a window earlier.
    let write_1m = IoOp {
        direction: IoDirection::Write,
        bytes: 1 << 20,
    };
    let unbuffered = idle_latency_us(&profile, write_1m, 200);
    let buffered = idle_latency_us(&NvmeProfile::optane_p4800x(), write_1m, 200);
    assert!(
        within(unbuffered, 499.3 * 1.054 + 2.0, 0.03),
        "{unbuffered} us"
    );
    assert!(within(unbuffered - buffered, 150.0, 0.1), "{buffered} us");
    let saturated = closed_loop(profile, WRITE_4K, 64, 20_000);
    assert!(within(saturated.iops, 500_000.0, 0.02), "{saturated:?}");
}

#[test]
fn latency_is_flat_below_the_knee_then_grows_by_littles_law() {
    let profile = NvmeProfile::i3_drive();
    let channels = u64::from(profile.channels());
    let shallow = closed_loop(profile.clone(), READ_4K, channels / 2, 20_000);
    assert!(within(shallow.mean_us, 90.0, 0.02), "{shallow:?}");
    let deep = closed_loop(profile, READ_4K, 4 * channels, 50_000);
    // Saturated: latency is the queue depth over the IOPS.
    let little_us = (4 * channels) as f64 / deep.iops * 1e6;
    assert!(within(deep.mean_us, little_us, 0.01), "{deep:?}");
    assert!(deep.mean_us > 3.5 * shallow.mean_us, "{deep:?}");
}

#[test]
fn large_transfers_are_bandwidth_bound_in_each_direction() {
    for profile in NvmeProfile::presets() {
        for (direction, bytes_per_s) in [
            (IoDirection::Read, profile.read_bytes_per_s),
            (IoDirection::Write, profile.write_bytes_per_s),
        ] {
            let op = IoOp {
                direction,
                bytes: 1 << 20,
            };
            let figures = closed_loop(profile.clone(), op, 16, 3_000);
            let measured = figures.iops * (1 << 20) as f64;
            // Within 3%: the per-request cost (fitted to 4 KiB IOPS) is
            // charged on top of the bytes (P4500 writes: -2.4%).
            assert!(
                within(measured, bytes_per_s, 0.03),
                "{} {direction:?}: {measured} B/s",
                profile.name
            );
        }
    }
}

#[test]
fn striping_scales_the_profile() {
    let one = NvmeProfile::i3_drive();
    let four = one.striped(4);
    assert_eq!(four.drives, 4);
    assert_eq!(four.channels(), 4 * one.channels());
    assert_eq!(four.read_iops, 4.0 * one.read_iops);
    assert_eq!(four.striped(2).drives, 8);
}

#[test]
fn a_share_keeps_the_latency_and_scales_the_capacity() {
    let array = NvmeProfile::i3_drive().striped(2);
    let whole_read = idle_latency_us(&array, READ_4K, 2_000);
    let whole_write = idle_latency_us(&array, WRITE_4K, 2_000);
    for fraction in [1.0 / 14.0, 4.0 / 14.0, 0.5, 1.0] {
        let share = array.share(fraction);
        assert_eq!((share.drives, share.channels()), (2, array.channels()));
        // Idle, a request is served as fast as on the whole device.
        let read_qd1 = idle_latency_us(&share, READ_4K, 2_000);
        let write_qd1 = idle_latency_us(&share, WRITE_4K, 2_000);
        assert!(
            within(read_qd1, whole_read, 1e-9),
            "{fraction}: read {read_qd1} us"
        );
        assert!(
            within(write_qd1, whole_write, 1e-9),
            "{fraction}: write {write_qd1} us"
        );
        // Saturated, it does its share of the IOPS.
        let deep = 4 * u64::from(share.channels());
        let reads = closed_loop(share.clone(), READ_4K, deep, 20_000);
        assert!(
            within(reads.iops, array.read_iops * fraction, 0.03),
            "{fraction}: {reads:?}"
        );
        let writes = closed_loop(share.clone(), WRITE_4K, 256, 20_000);
        assert!(
            within(writes.iops, array.write_iops * fraction, 0.03),
            "{fraction}: {writes:?}"
        );
    }
    assert!((array.share(0.5).share(0.5).share - 0.25).abs() < 1e-12);
}

#[test]
fn a_request_larger_than_the_chunk_completes_when_its_last_part_does() {
    let chunk = params::RAID_CHUNK_BYTES;
    let one = NvmeProfile::optane_p4800x();
    let two = one.striped(2);
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let write = |bytes| IoOp {
        direction: IoDirection::Write,
        bytes,
    };
    // Two chunks from a chunk boundary: one chunk on each drive, in
    // parallel; the same two chunks on one drive, one after the other.
    let mut device = NvmeDevice::new(two.clone());
    let split = device.submit_at(SimTime::ZERO, 0, write(2 * chunk), 0, &mut rng);
    let mut device = NvmeDevice::new(one.clone());
    let first = device.submit_at(SimTime::ZERO, 0, write(chunk), 0, &mut rng);
    let second = device.submit_at(SimTime::ZERO, 1, write(chunk), 0, &mut rng);
    let one_chunk = first.at.as_nanos() as f64;
    assert!(
        (split.at.as_nanos() as f64) < 1.3 * one_chunk,
        "split {split:?} vs one chunk {first:?}"
    );
    assert!(second.at.as_nanos() as f64 > 1.8 * one_chunk, "{second:?}");
    // The same request one chunk in: its two parts land on drive 1 then
    // drive 0; either way the request waits for both.
    let mut device = NvmeDevice::new(two);
    let busy = device.submit_at(SimTime::ZERO, 0, write(chunk), 0, &mut rng);
    let straddling = device.submit_at(SimTime::ZERO, 1, write(2 * chunk), chunk, &mut rng);
    assert!(
        straddling.at > busy.at,
        "the part behind drive 0's queue decides"
    );
}

#[test]
fn raid0_spreads_random_requests_over_its_drives() {
    let two = NvmeProfile::optane_p4800x().striped(2);
    let figures = closed_loop(two, READ_4K, 64, 50_000);
    assert!(within(figures.iops, 2.0 * 550_000.0, 0.03), "{figures:?}");
}

/// Peak IOPS over queue depths 1..=`max_depth` (every 2), and the knee: the
/// smallest depth reaching 95% of the peak.
fn knee(profile: NvmeProfile, max_depth: u64) -> (u64, f64) {
    let points: Vec<(u64, f64)> = (1..=max_depth)
        .step_by(2)
        .map(|depth| {
            (
                depth,
                closed_loop(profile.clone(), READ_4K, depth, 20_000).iops,
            )
        })
        .collect();
    let peak = points.iter().map(|point| point.1).fold(0.0, f64::max);
    let knee = points
        .iter()
        .find(|point| point.1 >= 0.95 * peak)
        .expect("the peak reaches itself")
        .0;
    (knee, peak)
}

/// RAID-0 of N drives: N times the IOPS, reached at N times the single
/// drive's knee or deeper. Random 4 KiB requests land on the drives like
/// balls in bins, so at N times one drive's knee some drives still idle
/// while others queue; the striped curve bends later and more gently (2 x
/// Optane: knee ~21-24 at ~1.05M IOPS, R6's fio figure, against ~5 for one
/// drive's hard 550K cap).
#[test]
fn raid0_of_n_drives_gives_n_times_the_iops_at_n_times_the_knee_or_deeper() {
    let (knee_one, peak_one) = knee(NvmeProfile::optane_p4800x(), 64);
    for drives in [2u64, 4] {
        let (knee_n, peak_n) = knee(
            NvmeProfile::optane_p4800x().striped(drives as u32),
            48 * drives,
        );
        let n = drives as f64;
        assert!(
            within(peak_n, n * peak_one, 0.05),
            "{drives} drives: {peak_n} vs {peak_one}"
        );
        assert!(
            (drives * knee_one..=6 * drives * knee_one).contains(&knee_n),
            "{drives} drives: knee {knee_n} vs {knee_one}"
        );
    }
}

#[test]
fn writes_raise_nand_read_latency_but_barely_optane_s() {
    // Reads at a quarter of the drive's units; a 4 KiB write stream at
    // about 40% of the drive's write IOPS.
    for (profile, min_ratio, max_ratio) in [
        (NvmeProfile::i3_drive(), 1.5, 10.0),
        (NvmeProfile::by_name("p4500-tlc").unwrap(), 1.5, 20.0),
        (NvmeProfile::optane_p4800x(), 1.0, 1.15),
    ] {
        let depth = u64::from(profile.channels()).div_ceil(4);
        let rate = 0.4 * profile.write_iops;
        let alone = closed_loop(profile.clone(), READ_4K, depth, 20_000);
        let mixed =
            closed_loop_with_background(profile.clone(), READ_4K, depth, 20_000, WRITE_4K, rate);
        let ratio = mixed.mean_us / alone.mean_us;
        assert!(
            (min_ratio..=max_ratio).contains(&ratio),
            "{}: reads alone {alone:?}, with writes {mixed:?} (x{ratio:.2})",
            profile.name
        );
        assert!(within(mixed.writes_per_s, rate, 0.05), "{mixed:?}");
    }
}

#[test]
fn busy_time_counts_only_time_with_requests_outstanding() {
    let mut device = NvmeDevice::new(NvmeProfile::i3_drive());
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    let start = SimTime::from_nanos(1_000);
    let completion = device.submit(start, 0, READ_4K, &mut rng).unwrap();
    assert_eq!(device.outstanding(), 1);
    assert_eq!(device.complete(completion.at, &mut rng), None);
    let later = completion.at + SimDuration::from_millis(1);
    assert_eq!(device.busy_time(later), completion.at - start);
    assert_eq!(device.outstanding(), 0);
    assert_eq!(device.completed(), 1);
    assert_eq!(device.bytes_transferred(), (4096, 0));
}

#[test]
fn the_same_seed_gives_the_same_completions() {
    let run = || {
        let mut device = NvmeDevice::new(NvmeProfile::i3_drive().striped(4));
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        (0..1_000u64)
            .map(|tag| {
                let op = if tag % 3 == 0 { WRITE_4K } else { READ_4K };
                device
                    .submit(SimTime::from_nanos(tag * 700), tag, op, &mut rng)
                    .unwrap()
                    .at
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn setting_no_slowdown_changes_no_completion() {
    // Reads and writes of 4 to 64 KiB, arriving faster than the devices
    // serve them: queues, buffered writes, program stalls and RAID splits.
    let op = |tag: u64| IoOp {
        direction: if tag.is_multiple_of(3) {
            IoDirection::Write
        } else {
            IoDirection::Read
        },
        bytes: 4096 << (tag % 5),
    };
    for profile in [
        NvmeProfile::i3_drive().striped(4).share(0.5),
        NvmeProfile::optane_p4800x(),
        NvmeProfile::by_name("p4500-tlc").unwrap().striped(2),
    ] {
        let run = |set_none: bool| {
            let mut device = NvmeDevice::new(profile.clone());
            let mut rng = Pcg64Mcg::seed_from_u64(9);
            (0..2_000u64)
                .map(|tag| {
                    if set_none && tag.is_multiple_of(500) {
                        device.set_slowdown(Slowdown::NONE);
                    }
                    let now = SimTime::from_nanos(tag * 700);
                    device.submit(now, tag, op(tag), &mut rng).unwrap().at
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(true), run(false), "{}", profile.name);
    }
    // After a slowdown, NONE gives back the healthy model itself.
    let mut device = NvmeDevice::new(NvmeProfile::i3_drive().share(0.25));
    assert_eq!(device.slowdown(), Slowdown::NONE);
    let healthy = device.model.clone();
    let slow = Slowdown {
        latency_factor: 3.0,
        throughput_factor: 0.3,
    };
    device.set_slowdown(slow);
    assert_eq!(device.slowdown(), slow);
    assert_ne!(device.model, healthy);
    device.set_slowdown(Slowdown::NONE);
    assert_eq!(device.model, healthy);
}

#[test]
fn a_throughput_factor_scales_the_saturated_iops() {
    let half = Slowdown {
        latency_factor: 1.0,
        throughput_factor: 0.5,
    };
    for profile in [
        NvmeProfile::i3_drive(),
        NvmeProfile::by_name("p4500-tlc").unwrap(),
        NvmeProfile::optane_p4800x(),
        NvmeProfile::optane_p4800x().striped(2),
    ] {
        let deep = 8 * u64::from(profile.channels());
        for (op, depth) in [(READ_4K, deep), (WRITE_4K, 256)] {
            let healthy = closed_loop(profile.clone(), op, depth, 50_000);
            let mut device = NvmeDevice::new(profile.clone());
            device.set_slowdown(half);
            let slowed = closed_loop_on(device, op, depth, 50_000, WRITE_4K, 0.0);
            assert!(
                within(slowed.iops, 0.5 * healthy.iops, 0.03),
                "{} {:?}: healthy {healthy:?}, slowed {slowed:?}",
                profile.name,
                op.direction
            );
        }
    }
}

#[test]
fn slowdown_factors_scale_their_parts_of_the_qd1_latency() {
    for profile in NvmeProfile::presets() {
        let name = profile.name;
        // The model's split of the QD1 read latency: a 4 KiB read's unit
        // time is `units / IOPS` (Little's law), the rest is fixed latency.
        let unit_ns = f64::from(profile.units_per_drive()) * 1e9 / profile.drive.read_iops;
        let fixed_ns = profile.drive.read_latency_ns as f64 - unit_ns;
        assert!(fixed_ns >= 0.0, "{name}: unit time {unit_ns} ns");
        let healthy = slowed_idle_latency_us(&profile, Slowdown::NONE, READ_4K, 2_000) * 1e3;
        // The same random draws on each device: only the slowed part moves
        // (by up to 1 ns of rounding per request).
        let latency_x4 = Slowdown {
            latency_factor: 4.0,
            throughput_factor: 1.0,
        };
        let slower = slowed_idle_latency_us(&profile, latency_x4, READ_4K, 2_000) * 1e3;
        assert!(
            (slower - healthy - 3.0 * fixed_ns).abs() <= 1.0,
            "{name}: {healthy} ns, x4 fixed latency {slower} ns (fixed {fixed_ns} ns)"
        );
        let throughput_half = Slowdown {
            latency_factor: 1.0,
            throughput_factor: 0.5,
        };
        let slower = slowed_idle_latency_us(&profile, throughput_half, READ_4K, 2_000) * 1e3;
        assert!(
            (slower - (2.0 * healthy - fixed_ns)).abs() <= 1.0,
            "{name}: {healthy} ns, half throughput {slower} ns (fixed {fixed_ns} ns)"
        );
        // A lone buffered write is acknowledged by the front end alone:
        // all of it is fixed latency. At half the throughput its media work
        // takes twice as long, and so does the buffer window (the same
        // bytes), so it is still acknowledged as fast (at half the P4500's
        // throughput its 4 KiB program, 2.2 ms, would outlast a 2 ms window).
        let healthy = slowed_idle_latency_us(&profile, Slowdown::NONE, WRITE_4K, 2_000);
        let slower = slowed_idle_latency_us(&profile, latency_x4, WRITE_4K, 2_000);
        if profile.drive.write_buffer_ns == 0 {
            // Without a write buffer (a measured virtual disk) a write
            // waits for its media work: either slowdown lengthens it.
            let halved = slowed_idle_latency_us(&profile, throughput_half, WRITE_4K, 2_000);
            assert!(
                slower > healthy && halved > healthy,
                "{name}: write {healthy} us, x4 latency {slower} us, half throughput {halved} us"
            );
            continue;
        }
        assert!(
            within(slower, 4.0 * healthy, 1e-3),
            "{name}: write {healthy} us, x4 fixed latency {slower} us"
        );
        let slower = slowed_idle_latency_us(&profile, throughput_half, WRITE_4K, 2_000);
        assert_eq!(slower, healthy, "{name}: write at half throughput");
    }
}

#[test]
fn a_slowdown_spares_the_completions_already_promised() {
    let profile = NvmeProfile::optane_p4800x();
    let channels = u64::from(profile.channels());
    let unit_ns = channels as f64 * 1e9 / profile.drive.read_iops;
    let fixed_ns = profile.drive.read_latency_ns as f64 - unit_ns;
    let mut healthy = NvmeDevice::new(profile.clone());
    let mut slowed = NvmeDevice::new(profile);
    let mut healthy_rng = Pcg64Mcg::seed_from_u64(4);
    let mut slowed_rng = Pcg64Mcg::seed_from_u64(4);
    // Two requests per unit at once: one in service, one queued behind it.
    let submit_all = |device: &mut NvmeDevice, rng: &mut Pcg64Mcg| {
        (0..2 * channels)
            .map(|tag| device.submit(SimTime::ZERO, tag, READ_4K, rng).unwrap())
            .collect::<Vec<_>>()
    };
    let promised = submit_all(&mut healthy, &mut healthy_rng);
    assert_eq!(submit_all(&mut slowed, &mut slowed_rng), promised);
    // Everything a slowdown multiplies by 4: the unit time and the fixed
    // latency.
    slowed.set_slowdown(Slowdown {
        latency_factor: 4.0,
        throughput_factor: 0.25,
    });
    // A later request waits, on either device, for the first unit to free
    // (the earliest queued request to finish), then is served: 4 times as
    // long on the slowed device, give or take rounding.
    let now = SimTime::from_nanos(1_000);
    let late_healthy = healthy.submit(now, 99, READ_4K, &mut healthy_rng).unwrap();
    let late_slowed = slowed.submit(now, 99, READ_4K, &mut slowed_rng).unwrap();
    let first_free = promised[channels as usize..]
        .iter()
        .map(|completion| completion.at.as_nanos() as f64 - fixed_ns)
        .fold(f64::INFINITY, f64::min);
    assert!(first_free > now.as_nanos() as f64, "the units are all busy");
    let served_healthy = late_healthy.at.as_nanos() as f64 - first_free;
    let served_slowed = late_slowed.at.as_nanos() as f64 - first_free;
    assert!(
        (served_slowed - 4.0 * served_healthy).abs() <= 10.0,
        "healthy {served_healthy} ns, slowed {served_slowed} ns after the first unit frees"
    );
    // The promised completions happen when promised.
    for completion in &promised {
        assert_eq!(slowed.complete(completion.at, &mut slowed_rng), None);
    }
    assert_eq!(slowed.outstanding(), 1);
    assert_eq!(slowed.completed(), 2 * channels);
}

/// Sets `slowdown` on a fresh Optane device.
fn slow_down(slowdown: Slowdown) {
    NvmeDevice::new(NvmeProfile::optane_p4800x()).set_slowdown(slowdown);
}

#[test]
#[should_panic(expected = "slowdown throughput_factor must be in (0, 1], got 0")]
fn a_throughput_factor_of_zero_panics() {
    slow_down(Slowdown {
        latency_factor: 1.0,
        throughput_factor: 0.0,
    });
}

#[test]
#[should_panic(expected = "slowdown throughput_factor must be in (0, 1], got 1.5")]
fn a_throughput_factor_above_one_panics() {
    slow_down(Slowdown {
        latency_factor: 1.0,
        throughput_factor: 1.5,
    });
}

#[test]
#[should_panic(expected = "slowdown latency_factor must be finite and > 0, got NaN")]
fn a_nan_latency_factor_panics() {
    slow_down(Slowdown {
        latency_factor: f64::NAN,
        throughput_factor: 1.0,
    });
}

#[test]
#[should_panic(expected = "slowdown latency_factor must be finite and > 0, got 0")]
fn a_latency_factor_of_zero_panics() {
    slow_down(Slowdown {
        latency_factor: 0.0,
        throughput_factor: 1.0,
    });
}

#[test]
fn presets_are_found_by_name_and_carry_sources() {
    for profile in NvmeProfile::presets() {
        assert_eq!(NvmeProfile::by_name(profile.name), Some(profile.clone()));
        assert!(!profile.source.is_empty());
        assert!(profile.units_per_drive() >= 1);
    }
    assert_eq!(NvmeProfile::by_name("no-such-drive"), None);
    assert_eq!(NvmeProfile::i3_drive().name, "i3-nvme");
}

/// Slowdowns in force together multiply, and their product is clamped to
/// the model's bounds, so two faults valid alone cannot stack past them.
#[test]
fn stacked_slowdowns_multiply_within_the_bounds() {
    let half = Slowdown {
        latency_factor: 2.0,
        throughput_factor: 0.5,
    };
    assert_eq!(
        half.stacked(half),
        Slowdown {
            latency_factor: 4.0,
            throughput_factor: 0.25
        }
    );
    assert_eq!(Slowdown::NONE.stacked(half), half);
    let worst = Slowdown {
        latency_factor: Slowdown::MAX_LATENCY_FACTOR,
        throughput_factor: Slowdown::MIN_THROUGHPUT_FACTOR,
    };
    assert!(worst.is_bounded());
    assert_eq!(worst.stacked(worst), worst);
    assert_eq!(worst.stacked(half), worst);
    assert!(!Slowdown {
        latency_factor: f64::NAN,
        throughput_factor: 1.0
    }
    .is_bounded());
    // The worst device still completes a read, in a sane time.
    let mut device = NvmeDevice::new(NvmeProfile::optane_p4800x());
    device.set_slowdown(worst);
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let done = device
        .submit(SimTime::ZERO, 1, READ_4K, &mut rng)
        .expect("an idle device takes a read at once");
    assert!(
        done.at > SimTime::ZERO + SimDuration::from_millis(10),
        "{}",
        done.at
    );
    assert!(done.at < SimTime::ZERO + SimDuration::from_secs(60));
}
