/* The portable PDB handle shared by the files of libmdtools/pdb/. */
#ifndef MDT_PDB_INT_H
#define MDT_PDB_INT_H

#include <mdtools/image.h>
#include <mdtools/pdb.h>

struct mdt_pdb {
    mdt_image *md; /* the PDB's metadata (owned) */
    int source;    /* enum mdt_pdb_source */
    char *path;    /* file, or NAME!embedded */
};

#endif
