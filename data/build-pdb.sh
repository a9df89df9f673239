#!/bin/sh
# build-pdb.sh: rebuild the portable-PDB fixtures in data/pdb/ from
# data/src/pdb/Lines.cs with the .NET SDK's C# compiler (Roslyn). Mono's
# mcs writes only .mdb symbols, so these need `dotnet`.
#
#   data/build-pdb.sh            rebuild into data/pdb/ (overwrites the committed files)
#   data/build-pdb.sh --verify   rebuild into a scratch directory and compare
#
# Outputs: pdb/Lines.dll with pdb/Lines.pdb beside it (DebugType portable),
# pdb/LinesEmbedded.dll with its PDB embedded (DebugType embedded). Both are
# Debug builds (no optimization, so every statement and brace has its
# sequence point), deterministic, with the build folder mapped to
# /_/src/pdb so the document names in the PDBs hold no path of the build
# machine. Builds are reproducible with the same SDK (the compiler's
# version is recorded in the PDB).
set -eu

DATA=$(cd "$(dirname "$0")" && pwd)
VERIFY=no
case "${1:-}" in
    --verify) VERIFY=yes ;;
    "") ;;
    *) echo "usage: $0 [--verify]" >&2; exit 2 ;;
esac
command -v dotnet >/dev/null 2>&1 || {
    echo "build-pdb.sh: dotnet not found (the .NET SDK)" >&2
    exit 1
}

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT INT TERM

project() { # project DIR ASSEMBLYNAME DEBUGTYPE
    mkdir -p "$1"
    cp "$DATA/src/pdb/Lines.cs" "$1/"
    cat > "$1/$2.csproj" <<EOP
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net10.0</TargetFramework>
    <OutputType>Library</OutputType>
    <AssemblyName>$2</AssemblyName>
    <Optimize>false</Optimize>
    <DebugType>$3</DebugType>
    <Deterministic>true</Deterministic>
    <ImplicitUsings>disable</ImplicitUsings>
    <Nullable>disable</Nullable>
    <PathMap>\$(MSBuildProjectDirectory)=/_/src/pdb</PathMap>
  </PropertyGroup>
</Project>
EOP
    (cd "$1" && dotnet build -nologo -v q -c Debug -o "$W/out" >/dev/null) || {
        echo "build-pdb.sh: dotnet build of $2 failed" >&2
        exit 1
    }
}

echo "build-pdb.sh: pdb/Lines.dll + Lines.pdb"
project "$W/side" Lines portable
echo "build-pdb.sh: pdb/LinesEmbedded.dll"
project "$W/embedded" LinesEmbedded embedded

OUTPUTS="Lines.dll Lines.pdb LinesEmbedded.dll"
if [ "$VERIFY" = yes ]; then
    bad=0
    for f in $OUTPUTS; do
        if cmp -s "$W/out/$f" "$DATA/pdb/$f"; then echo "same: pdb/$f"; else echo "DIFFERS: pdb/$f"; bad=1; fi
    done
    exit $bad
fi
mkdir -p "$DATA/pdb"
for f in $OUTPUTS; do
    cp "$W/out/$f" "$DATA/pdb/$f"
done
echo "build-pdb.sh: done"
