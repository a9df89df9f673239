/* What the three files of `il -a --ilasm` share (ilasm_put.c: names,
 * bytes, attributes, constants and generic parameters; ilasm_members.c:
 * fields, methods, properties and events; ilasm_module.c: classes, the
 * manifest and the module): the printer's state for one module and the
 * calls between them. */
#ifndef MDI_ILASM_H
#define MDI_ILASM_H

#include <stdint.h>
#include <stdio.h>

#include <mdtools/sig.h>
#include <mdtools/tables.h>

#include "il_text.h"

struct out {
    struct il *c;
    FILE *f;
    void *mem;
    const mdt_image *img;
    uint32_t *nested_of; /* per TypeDef rid: enclosing rid, 0 if none */
    uint32_t ntypes;
    /* field RVA data to write after the classes: .data D_<rva> */
    struct data_block {
        uint32_t rva, size;
    } * data;
    size_t ndata;
};

void mdi_ilasm_ind(struct out *o, unsigned d);
/* An identifier, quoted as ILAsm needs. */
void mdi_ilasm_put_id(struct out *o, const char *s);
/* The error just met, as a comment, and cleared. */
void mdi_ilasm_put_error(struct out *o, const char *what);
void mdi_ilasm_put_type(struct out *o, const mdt_type *t);
void mdi_ilasm_put_token(struct out *o, uint32_t tok);
/* A method token as an ILAsm method reference (`instance void X::M(int32)`). */
void mdi_ilasm_put_method_ref(struct out *o, uint32_t tok);
/* Bytes as ILAsm's bytearray `( 01 02 ... )`, 16 a line. */
void mdi_ilasm_put_bytes(struct out *o, const uint8_t *p, uint32_t n, unsigned d);
/* Every custom attribute on `parent`. */
void mdi_ilasm_put_customs(struct out *o, uint32_t parent, unsigned d);
void mdi_ilasm_put_gparam_customs(struct out *o, uint32_t owner, unsigned d);
void mdi_ilasm_put_security(struct out *o, uint32_t parent, unsigned d);
void mdi_ilasm_put_constant(struct out *o, uint32_t parent);
void mdi_ilasm_put_generic_params(struct out *o, uint32_t owner);
/* A quoted string (II.5.2's QSTRING). */
void mdi_ilasm_put_qstr(struct out *o, const char *s);
void mdi_ilasm_put_marshal(struct out *o, uint32_t tok, bool lead);
/* The field RVA data gathered while the classes were written: .data D_<rva>. */
void mdi_ilasm_put_data(struct out *o);
/* A class's fields, methods, properties and events. */
void mdi_ilasm_put_members(struct out *o, uint32_t rid, const mdt_row *r, unsigned d);

#endif
