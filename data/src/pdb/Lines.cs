// Lines.cs: the portable-PDB fixture (data/README.md, "pdb/").
// Built by data/build-pdb.sh twice: as Lines.dll with Lines.pdb beside it,
// and as LinesEmbedded.dll with the PDB embedded. A comment `//@NAME` marks
// each line where the compiler puts a visible sequence point of method NAME;
// tests/unit/test_pdb.c reads these marks and compares them with the points
// it decodes. Do not move lines without rebuilding and re-marking.
using System;

namespace Lines
{
    public static class Calc
    {
        public static int Add(int a, int b)
        {                                   //@Add
            int c = a + b;                  //@Add
            return c;                       //@Add
        }                                   //@Add

        public static int Loop(int n)
        {                                   //@Loop
            int sum = 0;                    //@Loop
            for (int i = 0; i < n; i++)     //@Loop
            {                               //@Loop
                sum += i;                   //@Loop
            }                               //@Loop
            return sum;                     //@Loop
        }                                   //@Loop

        public static int TwoFiles(int x)
        {                                   //@TwoFiles
            int y = x * 2;                  //@TwoFiles
#line 100 "Other.cs"
            y += 1;
#line default
            return y;                       //@TwoFiles
        }                                   //@TwoFiles

        public static int Hidden(int x)
        {                                   //@Hidden
#line hidden
            x = x + 1;
#line default
            return x;                       //@Hidden
        }                                   //@Hidden

        public static Func<int, int> Adder(int k)
        {                                   //@Adder
            return v => v + k;              //@Adder @<Adder>b__0
        }                                   //@Adder
    }

    public class Box<T>
    {
        public T Value;

        public U Convert<U>(Func<T, U> f)
        {                                   //@Convert
            return f(Value);                //@Convert
        }                                   //@Convert

        public class Inner<V>
        {
            public static V Echo(V v)
            {                               //@Echo
                return v;                   //@Echo
            }                               //@Echo
        }
    }
}
