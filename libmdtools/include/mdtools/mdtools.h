/* mdtools: umbrella header. */
#ifndef MDTOOLS_MDTOOLS_H
#define MDTOOLS_MDTOOLS_H

#include <mdtools/errors.h>
#include <mdtools/file.h>
#include <mdtools/token.h>
#include <mdtools/image.h>
#include <mdtools/tables.h>
#include <mdtools/heaps.h>
#include <mdtools/assembly.h>
#include <mdtools/nesting.h>
#include <mdtools/members.h>
#include <mdtools/sig.h>
#include <mdtools/names.h>
#include <mdtools/value.h>
#include <mdtools/attr.h>
#include <mdtools/descriptor.h>
#include <mdtools/modset.h>
#include <mdtools/typeref.h>
#include <mdtools/idmap.h>
#include <mdtools/pdb.h>
#include <mdtools/il.h>
#include <mdtools/pe.h>
#include <mdtools/strongname.h>
#include <mdtools/resources.h>
#include <mdtools/bundle.h>

#endif
