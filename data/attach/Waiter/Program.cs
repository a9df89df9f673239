// Target of the attach tests: prints what it knows about itself (the tests
// compare it with what the runtime answers over the diagnostics IPC), then
// waits ARG seconds (default 120) so a test can attach, and exits.
using System;
using System.Runtime.InteropServices;
using System.Threading;

static class Waiter
{
    static int Main(string[] args)
    {
        int seconds = args.Length > 0 ? int.Parse(args[0]) : 120;
        Console.WriteLine("pid " + Environment.ProcessId);
        Console.WriteLine("version " + Environment.Version);
        Console.WriteLine("framework " + RuntimeInformation.FrameworkDescription);
        Console.WriteLine("ready");
        Console.Out.Flush();
        Thread.Sleep(seconds * 1000);
        return 0;
    }
}
