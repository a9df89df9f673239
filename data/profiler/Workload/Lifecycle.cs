// Modes for the profiler's lifecycle tests (tests/profiler/lifecycle.py):
// a tree of processes, each profiled into its own log, and a program that
// is interrupted by a signal. Each writes what it ran as the names mode
// does (Names.cs), to a file of its own.
//
//   Workload tree PREFIX LEVELS MS    the names workload for MS ms (wall and
//                                     CPU), with a child `dotnet Workload
//                                     tree PREFIX LEVELS-1 MS` running
//                                     meanwhile when LEVELS > 0; writes
//                                     PREFIX.PID.expected, prints "tree PID
//                                     PPID LEVEL", and fails when its child
//                                     failed
//   Workload signal EXPECTED [cancel] the names workload until a signal ends
//                                     the process: says "ready PID" after a
//                                     second of CPU time; its handler of
//                                     SIGTERM and SIGINT writes EXPECTED (with
//                                     "# signals N", how many came) and lets
//                                     the signal end the process, or with
//                                     cancel exits with 128 + the signal
//                                     after counting signals for a second
using System;
using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading;

namespace Mdp.Work
{
    public static class Lifecycle
    {
        static PosixSignalRegistration[] regs;

        public static int Tree(string prefix, int levels, int ms)
        {
            Process child = null;
            if (levels > 0)
            {
                var psi = new ProcessStartInfo(Environment.ProcessPath) { UseShellExecute = false };
                psi.ArgumentList.Add(Assembly.GetExecutingAssembly().Location);
                psi.ArgumentList.Add("tree");
                psi.ArgumentList.Add(prefix);
                psi.ArgumentList.Add((levels - 1).ToString());
                psi.ArgumentList.Add(ms.ToString());
                child = Process.Start(psi);
            }
            Program.NamesFor(ms);
            int rc = 0;
            if (child != null)
            {
                child.WaitForExit();
                rc = child.ExitCode;
            }
            Names.Write(prefix + "." + Environment.ProcessId + ".expected");
            Console.WriteLine("tree " + Environment.ProcessId + " " + ParentPid() + " " + levels);
            return rc == 0 ? 0 : 1;
        }

        static int ParentPid()
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
                if (line.StartsWith("PPid:"))
                    return int.Parse(line.Substring(5).Trim());
            return 0;
        }

        static int hits;

        // cancel: the program handles the signal itself (counts the signals
        // that arrive within a second, then exits with 128 + the signal, a
        // clean shutdown); otherwise the signal goes on and the runtime ends
        // the process with it.
        public static void Signal(string expected, bool cancel)
        {
            Action<PosixSignalContext> onSignal = ctx =>
            {
                ctx.Cancel = cancel;
                if (Interlocked.Increment(ref hits) != 1)
                    return;
                if (cancel)
                    Thread.Sleep(1000); // a second signal would come meanwhile
                Names.Fact("signals", Volatile.Read(ref hits).ToString());
                Names.Write(expected);
                Console.WriteLine("exiting on " + ctx.Signal);
                Console.Out.Flush();
                if (cancel)
                    Environment.Exit(128 + (ctx.Signal == PosixSignal.SIGINT ? 2 : 15));
            };
            regs = new[] { PosixSignalRegistration.Create(PosixSignal.SIGTERM, onSignal),
                           PosixSignalRegistration.Create(PosixSignal.SIGINT, onSignal) };
            bool ready = false;
            Program.RunNamesWhile((wall, cpu) =>
            {
                if (!ready && cpu >= 1000)
                {
                    ready = true;
                    Console.WriteLine("ready " + Environment.ProcessId);
                    Console.Out.Flush();
                }
                return true;
            });
        }
    }
}
