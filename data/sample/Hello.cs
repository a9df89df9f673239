// Hello.cs: the smallest useful fixture; the first command in the top-level
// README runs mdinspect on the binary built from this file (sample/Hello.exe).
// Rebuild with data/build.sh.
using System;

namespace Sample
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            Console.WriteLine("Hello, metadata!");
            return args.Length;
        }
    }
}
