#!/bin/sh
# build.sh: rebuild every binary fixture in data/ from the sources beside it.
#
#   data/build.sh            rebuild into data/ (overwrites the committed binaries)
#   data/build.sh --verify   rebuild into a scratch directory and compare with
#                            the committed binaries byte for byte
#
# Needs: mcs, ilasm and resgen (Debian: mono-devel), python3; node is optional (it
# runs data/tools/webcil-check.js on the .wasm wrappers), dotnet too (the .NET
# SDK: decl/Decl.dll through build-decl.sh). After a rebuild
# that changes any binary, refresh data/facts.txt with
#   data/facts.sh > data/facts.txt
# and update the facts quoted in data/README.md.
#
# Reproducibility: mcs (Mono 6.8) writes TimeDateStamp 0 and an MVID derived
# from the content, so its output is byte-identical from build to build;
# strong-name signatures (PKCS#1 v1.5 with src/test.snk) are deterministic
# too. ilasm writes the time and a random MVID; tools/normalize-pe.py
# replaces both, so the ilasm-built files are reproducible as well.
# Different Mono versions may still produce different bytes.
set -eu

DATA=$(cd "$(dirname "$0")" && pwd)
VERIFY=no
case "${1:-}" in
    --verify) VERIFY=yes ;;
    "") ;;
    *) echo "usage: $0 [--verify]" >&2; exit 2 ;;
esac

for tool in mcs ilasm resgen python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "build.sh: $tool not found (apt-get install mono-devel python3)" >&2
        exit 1
    }
done

# Everything is built inside a scratch directory, so file names recorded in
# the binaries (module names, File rows, linked resources) are bare names.
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT INT TERM
S="$DATA/src"
KEY="-keyfile:$S/test.snk"
MCS="mcs -deterministic -nologo"
PY="python3 $DATA/tools"

cd "$W"
mkdir -p sample fwd/v1 fwd/v2 fwd/scratch raw webcil

echo "build.sh: sample/Hello.exe"
$MCS -target:exe -out:sample/Hello.exe "$DATA/sample/Hello.cs"

echo "build.sh: Everything.dll"
cp "$S/Everything.greeting.txt" .
$MCS -target:library -unsafe "$KEY" -nowarn:169 \
    -resource:Everything.greeting.txt,Everything.greeting.txt \
    -out:Everything.dll "$S/Everything.cs"

echo "build.sh: Sigs.dll"
ilasm /dll /quiet /output:Sigs.dll "$S/Sigs.il" >/dev/null
$PY/normalize-pe.py Sigs.dll

echo "build.sh: Shell.dll"
ilasm /dll /quiet /output:Shell.dll "$S/Shell.il" >/dev/null
$PY/normalize-pe.py Shell.dll

echo "build.sh: Marshal.dll (marshalling descriptors, P/Invoke flags)"
ilasm /dll /quiet /output:Marshal.dll "$S/Marshal.il" >/dev/null
$PY/normalize-pe.py Marshal.dll

echo "build.sh: MultiPart.netmodule, MultiMain.dll, MultiIL.dll"
$MCS -target:module -out:MultiPart.netmodule "$S/MultiPart.cs"
cp "$DATA/MultiNotes.txt" .
$MCS -target:library -addmodule:MultiPart.netmodule \
    -linkresource:MultiNotes.txt,Multi.Notes.txt \
    -out:MultiMain.dll "$S/MultiMain.cs"
want=$(python3 -c 'import hashlib,sys; print(" ".join("%02X" % x for x in hashlib.sha1(open(sys.argv[1],"rb").read()).digest()))' MultiPart.netmodule)
grep -q "^\.file MultiPart\.netmodule \.hash = ($want)\$" "$S/MultiIL.il" || {
    echo "build.sh: MultiPart.netmodule changed; put its SHA-1 ($want) into the .file line of src/MultiIL.il" >&2
    exit 1
}
ilasm /dll /quiet /output:MultiIL.dll "$S/MultiIL.il" >/dev/null
$PY/normalize-pe.py MultiIL.dll

echo "build.sh: resources/Res.dll (manifest resources; a resource set by resgen)"
mkdir -p resources
(
    cd resources
    cp "$S/Res.Strings.resx" "$S/Res.Logo.bin" "$S/Res.Notes.txt" "$DATA/resources/ResNotes.txt" .
    resgen Res.Strings.resx Res.Strings.resources >/dev/null
    $MCS -target:library -resource:Res.Strings.resources,Res.Strings.resources \
        -resource:Res.Logo.bin,Res.Logo.bin,private -resource:Res.Notes.txt,Res.Notes.txt \
        -linkresource:ResNotes.txt,Res.Linked.txt -out:Res.dll "$S/Res.cs"
)

echo "build.sh: fwd/ (Final, Real, Lib v1, Lib v2, Client)"
$MCS -target:library "$KEY" -out:fwd/Final.dll "$S/fwd/Final.cs"
$MCS -target:library "$KEY" -r:fwd/Final.dll -out:fwd/Real.dll "$S/fwd/Real.cs"
$MCS -target:library "$KEY" -define:CHAINED_HERE -out:fwd/scratch/Real.dll "$S/fwd/Real.cs"
$MCS -target:library "$KEY" -out:fwd/v1/Lib.dll "$S/fwd/Lib.v1.cs"
$MCS -target:library "$KEY" -r:fwd/scratch/Real.dll -out:fwd/v2/Lib.dll "$S/fwd/Lib.v2.cs"
$MCS -target:exe -r:fwd/v1/Lib.dll -out:fwd/Client.exe "$S/fwd/Client.cs"
rm -rf fwd/scratch

echo "build.sh: raw/Everything.md"
$PY/extract-metadata.py Everything.dll raw/Everything.md

echo "build.sh: webcil/"
$PY/webcil-pack.py v0 sample/Hello.exe webcil/Hello.v0.webcil
$PY/webcil-pack.py v1 sample/Hello.exe webcil/Hello.v1.webcil
$PY/webcil-pack.py wasm sample/Hello.exe webcil/Hello.wasm
$PY/webcil-pack.py wasm-v1 sample/Hello.exe webcil/Hello.v1.wasm
if command -v node >/dev/null 2>&1; then
    node "$DATA/tools/webcil-check.js" webcil/Hello.wasm webcil/Hello.v0.webcil \
        webcil/Hello.v1.wasm webcil/Hello.v1.webcil
fi

OUTPUTS="sample/Hello.exe Everything.dll Sigs.dll Shell.dll Marshal.dll MultiPart.netmodule MultiMain.dll MultiIL.dll
resources/Res.dll resources/Res.Strings.resources
fwd/Final.dll fwd/Real.dll fwd/v1/Lib.dll fwd/v2/Lib.dll fwd/Client.exe raw/Everything.md
webcil/Hello.v0.webcil webcil/Hello.v1.webcil webcil/Hello.wasm webcil/Hello.v1.wasm"

# decl/Decl.dll is Roslyn's (C# 13 constraints mcs does not compile):
# build-decl.sh, run here when the .NET SDK is installed.
decl() {
    if command -v dotnet >/dev/null 2>&1; then
        "$DATA/build-decl.sh" "$@"
    else
        echo "build.sh: dotnet not found: decl/Decl.dll not rebuilt (build-decl.sh)"
    fi
}

if [ "$VERIFY" = yes ]; then
    bad=0
    decl --verify || bad=1
    for f in $OUTPUTS; do
        if cmp -s "$f" "$DATA/$f"; then
            echo "same: $f"
        else
            echo "DIFFERS: $f"
            bad=1
        fi
    done
    exit $bad
fi

for f in $OUTPUTS; do
    mkdir -p "$DATA/$(dirname "$f")"
    cp "$f" "$DATA/$f"
done
decl
echo "build.sh: done; refresh facts with: $DATA/facts.sh > $DATA/facts.txt"
