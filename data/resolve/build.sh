#!/bin/sh
# build.sh: rebuild the resolution fixtures of data/resolve/ from src/.
#
#   data/resolve/build.sh            rebuild into data/resolve/
#   data/resolve/build.sh --verify   rebuild into a scratch directory and
#                                    compare with the committed binaries
#
# Needs mcs, ilasm (Debian: mono-devel) and python3. Keys: data/src/test.snk
# (token 6caac724c175405d) and src/other.snk (token 5078fb2e0f607ab9).
# Scratch assemblies (copies that still define types the shipped ones
# forward, or that the module sets deliberately lack) are built only to
# compile against and are not kept. What each reference must resolve to is
# in README.md. mcs -deterministic output and strong-name signatures are
# reproducible; ilasm output is normalized with data/tools/normalize-pe.py.
set -eu

R=$(cd "$(dirname "$0")" && pwd)
DATA=$(cd "$R/.." && pwd)
VERIFY=no
case "${1:-}" in
    --verify) VERIFY=yes ;;
    "") ;;
    *) echo "usage: $0 [--verify]" >&2; exit 2 ;;
esac
for tool in mcs ilasm python3; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "build.sh: $tool not found (apt-get install mono-devel python3)" >&2
        exit 1
    }
done

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT INT TERM
S="$R/src"
K1="-keyfile:$DATA/src/test.snk"
K2="-keyfile:$S/other.snk"
MCS="mcs -deterministic -nologo -nowarn:414,169,649,219"
PATCH="python3 $R/tools/patch-md.py"
LIB="$MCS -target:library"

cd "$W"
mkdir -p chain cycle ver/1.0 ver/2.0 ver/1.5k2 multi nest missing nil \
    s/hop0 s/hop1 s/hop2 s/cyca s/cycb s/cyc3a s/cyc3b s/cyc3c s/self s/selfx \
    s/v12 s/v30 s/vnokey s/nest s/ghosts s/absent s/nilhelper

echo "build.sh: chain/ (forwarder chains of 2 and 3 hops)"
$LIB "$K1" -define:DEF3 -out:chain/Hop3.dll "$S/Chain.cs"
$LIB "$K1" -define:DEF_TWO -r:chain/Hop3.dll -out:chain/Hop2.dll "$S/Chain.cs"
$LIB "$K1" -define:DEF_ALL -out:s/hop2/Hop2.dll "$S/Chain.cs"
$LIB "$K1" -define:FWD_ALL -r:s/hop2/Hop2.dll -out:chain/Hop1.dll "$S/Chain.cs"
$LIB "$K1" -define:DEF_ALL -out:s/hop1/Hop1.dll "$S/Chain.cs"
$LIB "$K1" -define:FWD_ALL -r:s/hop1/Hop1.dll -out:chain/Hop0.dll "$S/Chain.cs"
$LIB "$K1" -define:DEF_ALL -out:s/hop0/Hop0.dll "$S/Chain.cs"
$MCS -target:exe -r:s/hop0/Hop0.dll -out:chain/ChainClient.exe "$S/ChainClient.cs"

echo "build.sh: cycle/ (forwarder cycles over 2 and 3 assemblies, a self-forward)"
$LIB "$K1" -define:DEF_TWO -out:s/cycb/CycB.dll "$S/Cycle.cs"
$LIB "$K1" -define:DEF_TWO -out:s/cyca/CycA.dll "$S/Cycle.cs"
$LIB "$K1" -define:FWD_TWO -r:s/cycb/CycB.dll -out:cycle/CycA.dll "$S/Cycle.cs"
$LIB "$K1" -define:FWD_TWO -r:s/cyca/CycA.dll -out:cycle/CycB.dll "$S/Cycle.cs"
$LIB "$K1" -define:DEF_THREE -out:s/cyc3a/Cyc3A.dll "$S/Cycle.cs"
$LIB "$K1" -define:DEF_THREE -out:s/cyc3b/Cyc3B.dll "$S/Cycle.cs"
$LIB "$K1" -define:DEF_THREE -out:s/cyc3c/Cyc3C.dll "$S/Cycle.cs"
$LIB "$K1" -define:FWD_THREE -r:s/cyc3b/Cyc3B.dll -out:cycle/Cyc3A.dll "$S/Cycle.cs"
$LIB "$K1" -define:FWD_THREE -r:s/cyc3c/Cyc3C.dll -out:cycle/Cyc3B.dll "$S/Cycle.cs"
$LIB "$K1" -define:FWD_THREE -r:s/cyc3a/Cyc3A.dll -out:cycle/Cyc3C.dll "$S/Cycle.cs"
$LIB "$K1" -define:DEF_SELF -out:s/selfx/SelfFwX.dll "$S/Cycle.cs"
$LIB "$K1" -define:FWD_SELF -r:s/selfx/SelfFwX.dll -out:cycle/SelfFwd.dll "$S/Cycle.cs"
$PATCH asmref-rename cycle/SelfFwd.dll SelfFwX SelfFwd
$LIB "$K1" -define:DEF_SELF -out:s/self/SelfFwd.dll "$S/Cycle.cs"
$MCS -target:exe -r:s/cyca/CycA.dll -r:s/cyc3a/Cyc3A.dll -r:s/self/SelfFwd.dll \
    -out:cycle/CycleClient.exe "$S/CycleClient.cs"

echo "build.sh: ver/ (one name, three versions, two keys; six clients)"
$LIB "$K1" -define:V10 -out:ver/1.0/Ver.dll "$S/Ver.cs"
$LIB "$K1" -define:V20 -out:ver/2.0/Ver.dll "$S/Ver.cs"
$LIB "$K2" -define:V15 -out:ver/1.5k2/Ver.dll "$S/Ver.cs"
$LIB "$K1" -define:V12 -out:s/v12/Ver.dll "$S/Ver.cs"
$LIB "$K1" -define:V30 -out:s/v30/Ver.dll "$S/Ver.cs"
$LIB -define:V10NOKEY -out:s/vnokey/Ver.dll "$S/Ver.cs"
for c in 10:ver/1.0 20:ver/2.0 15:ver/1.5k2 12:s/v12 30:s/v30 NoKey:s/vnokey; do
    n=${c%%:*}
    d=${c#*:}
    sym=$(echo "C$n" | tr a-z A-Z)
    $MCS -target:exe -define:"$sym" -r:"$d/Ver.dll" -out:"ver/VerClient$n.exe" "$S/VerClient.cs"
done

cp ver/VerClient12.exe ver/VerClient12R.exe
$PATCH asmref-flags ver/VerClient12R.exe Ver 0x100

echo "build.sh: multi/ (a two-module assembly with ModuleRef scopes)"
$MCS -target:module -out:multi/MMPart.netmodule "$S/MMPart.cs"
hash=$(python3 -c 'import hashlib,sys; d=hashlib.sha1(open(sys.argv[1],"rb").read()).hexdigest().upper(); print(" ".join(d[i:i+2] for i in range(0,40,2)))' multi/MMPart.netmodule)
sed "s/@HASH@/$hash/" "$S/MM.il.in" > multi/MM.il
(cd multi && ilasm /dll /quiet /output:MM.dll MM.il >/dev/null)
rm multi/MM.il
python3 "$DATA/tools/normalize-pe.py" multi/MM.dll

echo "build.sh: nest/ (nesting four deep, forwarded)"
$LIB "$K1" -define:DEF -out:nest/NestReal.dll "$S/Nest.cs"
$LIB "$K1" -define:FWD -r:nest/NestReal.dll -out:nest/NestFwd.dll "$S/Nest.cs"
$LIB "$K1" -define:DEF -out:s/nest/NestFwd.dll "$S/Nest.cs"
$MCS -target:exe -r:s/nest/NestFwd.dll -out:nest/NestClient.exe "$S/NestClient.cs"

echo "build.sh: missing/ (types and assemblies that are nowhere)"
$LIB "$K1" -out:missing/Ghosts.dll "$S/Ghosts.cs"
$LIB "$K1" -define:GHOSTS_SCRATCH -out:s/ghosts/Ghosts.dll "$S/Ghosts.cs"
$LIB "$K1" -define:ABSENT -out:s/absent/Absent.dll "$S/Ghosts.cs"
$MCS -target:exe -r:s/ghosts/Ghosts.dll -r:s/absent/Absent.dll -out:missing/GhostClient.exe \
    "$S/GhostClient.cs"

echo "build.sh: nil/ (nil and Module resolution scopes)"
$LIB "$K1" -out:s/nilhelper/NilHelper.dll "$S/NilHelper.cs"
$MCS -target:exe -r:H=s/nilhelper/NilHelper.dll -r:chain/Hop3.dll -out:nil/NilClient.exe \
    "$S/NilClient.cs"
$PATCH typeref-scope nil/NilClient.exe Nil Local nil
$PATCH typeref-scope nil/NilClient.exe Nil ViaModule module
$PATCH typeref-scope nil/NilClient.exe Nil Nowhere nil
$PATCH typeref-scope nil/NilClient.exe Chain Plain nil

OUTS="chain/Hop0.dll chain/Hop1.dll chain/Hop2.dll chain/Hop3.dll chain/ChainClient.exe
cycle/CycA.dll cycle/CycB.dll cycle/Cyc3A.dll cycle/Cyc3B.dll cycle/Cyc3C.dll cycle/SelfFwd.dll
cycle/CycleClient.exe ver/1.0/Ver.dll ver/2.0/Ver.dll ver/1.5k2/Ver.dll ver/VerClient10.exe
ver/VerClient20.exe ver/VerClient15.exe ver/VerClient12.exe ver/VerClient30.exe
ver/VerClientNoKey.exe ver/VerClient12R.exe multi/MM.dll multi/MMPart.netmodule nest/NestReal.dll nest/NestFwd.dll
nest/NestClient.exe missing/Ghosts.dll missing/GhostClient.exe nil/NilClient.exe"

if [ "$VERIFY" = yes ]; then
    bad=0
    for f in $OUTS; do
        if ! cmp -s "$f" "$R/$f"; then
            echo "build.sh: $f differs from the committed file" >&2
            bad=1
        fi
    done
    [ "$bad" -eq 0 ] && echo "build.sh: all outputs identical"
    exit "$bad"
fi
for f in $OUTS; do
    mkdir -p "$R/$(dirname "$f")"
    cp "$f" "$R/$f"
done
echo "build.sh: done"
