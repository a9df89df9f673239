// A minimal API served on 127.0.0.1 only, at a port the system chooses
// (tests/profiler/web.sh, data/profiler/README.md). It prints
// "listening URL" once it serves; /work?n=N serializes N records to JSON
// and sorts them (CPU in the JSON writer, LINQ, the GC and Kestrel);
// /quit stops it, after which it writes OUT as the Workload does: one
// line per method of its own module, and its MVID as a fact.
//
//   Web OUT
//   Web reflect OUT FRAMES DIR...   reflection's names of a log's frames, as
//                                   Workload's (Resolve.cs), with ASP.NET Core
using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Mdp.Work;

namespace Mdp.Web
{
    public sealed class Item
    {
        public int Id { get; set; }
        public string Name { get; set; }
        public double Score { get; set; }
        public List<int> Tags { get; set; }
    }

    public static class Server
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Work(int n)
        {
            var items = new List<Item>(n);
            for (int i = 0; i < n; i++)
                items.Add(new Item { Id = i, Name = "item " + (i * 7919 % 1000), Score = (i * 31 % 97) / 7.0,
                                     Tags = Enumerable.Range(i % 5, 4).ToList() });
            var sorted = items.OrderBy(x => x.Name, StringComparer.Ordinal).ThenByDescending(x => x.Score).ToList();
            return JsonSerializer.Serialize(sorted);
        }

        public static int Main(string[] args)
        {
            if (args.Length < 1)
            {
                Console.Error.WriteLine("usage: Web OUT | Web reflect OUT FRAMES DIR...");
                return 2;
            }
            if (args[0] == "reflect" && args.Length >= 3)
                return Resolve.Run(args[1], args[2], args.Skip(3).ToArray());
            var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = new string[0] });
            builder.Logging.ClearProviders();
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            var app = builder.Build();
            app.MapGet("/work", (int n) => Results.Text(Work(n), "application/json"));
            app.MapGet("/quit", (IHostApplicationLifetime life) =>
            {
                life.StopApplication();
                return "bye";
            });
            app.Lifetime.ApplicationStarted.Register(() =>
            {
                var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>();
                Console.WriteLine("listening " + addresses.Addresses.First());
                Console.Out.Flush();
            });
            app.Run();
            Names.Fact("module", Names.Mvid(typeof(Server).Module));
            Names.Fact("corelib", Names.Mvid(typeof(object).Module));
            Names.NoteModule(typeof(Server).Module);
            Names.Write(args[0]);
            return 0;
        }
    }
}
