// What a spinning Cassandra worker costs on this machine: one thread doing
// what SEPWorker.doWaitSpin does with one spinner (Cassandra 5.0,
// concurrent/SEPWorker.java: LockSupport.parkNanos(10 us), then a look for
// work), for a few seconds, reporting the wall time, the thread's CPU time
// and the iterations. Run pinned to the server's core by
// `deploy/real/cassandra.sh spin-cost`; the twin's cassandra-5.0 preset
// takes how late a park returns as a measured fact of the machine
// (models::sep::SepParams::park_overshoot, the iteration less the 10-us
// sleep), as `twin device measure` gives the device.
//
//   java ParkSpin.java [SECONDS]
//
// Prints one JSON line: {"seconds":..,"iterations":..,"cpu_fraction":..,"iteration_us":..}

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

public class ParkSpin {
    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        // Warm up the loop (JIT) for a second, then measure.
        spin(1_000_000_000L);
        long cpuStart = threads.getCurrentThreadCpuTime();
        long wallStart = System.nanoTime();
        long iterations = spin((long) (seconds * 1e9));
        long wall = System.nanoTime() - wallStart;
        long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
        System.out.printf(
                "{\"seconds\":%.3f,\"iterations\":%d,\"cpu_fraction\":%.4f,\"iteration_us\":%.2f}%n",
                wall / 1e9, iterations, (double) cpu / wall, wall / 1e3 / iterations);
    }

    // The sole spinner's loop: sleep 10 us, look at the clock (SEPWorker
    // reads System.nanoTime() twice per iteration).
    static long spin(long nanos) {
        long end = System.nanoTime() + nanos;
        long iterations = 0;
        while (System.nanoTime() < end) {
            LockSupport.parkNanos(10_000L);
            iterations++;
        }
        return iterations;
    }
}
