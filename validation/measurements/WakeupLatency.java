// The measurement behind `models::wakeup` (validation/CALIBRATION.md, "The
// client"): how long a parked JVM thread takes to run once another thread
// unparks it.
//
// A "completer" thread parks for an exponential idle time (mean `gap-us`),
// then unparks a "waiter" that was parked all along: what a Java driver's
// event loop does when it completes the future a cassandra-stress thread
// waits on, and what a thread pool does when it hands a task to an idle
// worker. Both threads sleep between hand-offs, so no core is kept busy.
// The latency is from the `unpark` call to the waiter running.
//
// Not part of the build. With a JDK:
//   javac -d /tmp WakeupLatency.java && java -cp /tmp WakeupLatency 20000 1000
// Prints the percentiles and the mean in microseconds, and the lognormal
// (median, sigma) through the median and the 90th percentile.

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

public class WakeupLatency {
    static volatile long sent = 0;
    static volatile long seen = 0;

    public static void main(String[] args) throws Exception {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        double gapUs = args.length > 1 ? Double.parseDouble(args[1]) : 1000;
        long[] latencies = new long[samples];
        Thread waiter = new Thread(() -> {
            for (int i = 0; i < samples; i++) {
                while (seen == sent) LockSupport.park();
                latencies[i] = System.nanoTime() - sent;
                seen = sent;
            }
        });
        waiter.start();
        SplittableRandom random = new SplittableRandom(1);
        Thread.sleep(200);
        for (int i = 0; i < samples; i++) {
            LockSupport.parkNanos((long) (-Math.log(1 - random.nextDouble()) * gapUs * 1000));
            // The previous hand-off must have been taken before the next.
            while (seen != sent) LockSupport.parkNanos(10_000);
            sent = System.nanoTime();
            LockSupport.unpark(waiter);
        }
        waiter.join();
        Arrays.sort(latencies);
        double p50 = at(latencies, 0.5), p90 = at(latencies, 0.9);
        double mean = Arrays.stream(latencies).average().getAsDouble() / 1e3;
        System.out.printf(
            "wake-up latency over %d hand-offs (mean idle gap %.0f us): p10 %.1f  p50 %.1f  p90 %.1f  p99 %.1f"
                + "  mean %.1f us; lognormal median %.1f us, sigma %.3f%n",
            samples, gapUs, at(latencies, 0.1), p50, p90, at(latencies, 0.99), mean, p50,
            Math.log(p90 / p50) / 1.2815515655);
    }

    static double at(long[] sorted, double quantile) {
        return sorted[Math.min(sorted.length - 1, (int) (sorted.length * quantile))] / 1e3;
    }
}
