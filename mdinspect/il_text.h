/* What `il`'s two printers share (cmd_il.c: one method; ilasm_module.c: a
 * module as ILAsm source): the command's state and the body printer
 * (il_text.c). */
#ifndef MDI_IL_TEXT_H
#define MDI_IL_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include <mdtools/il.h>
#include <mdtools/names.h>

#include "cmd.h"

struct il {
    mdi_state *st;
    mdt_name_opts opts;    /* the session's, with parameter names */
    mdt_name_cache *cache; /* for opts, per module */
    const mdt_image *cache_img;
    bool raw;
    unsigned done, nobody;
};

/* Exception clause kinds by MDT_IL_EH_*: catch, filter, finally, fault. */
extern const char *const mdi_il_eh_kind[];

void mdi_il_use_image(struct il *c, const mdt_image *img);
/* A name from the image, control characters escaped. */
void mdi_il_put_clean(FILE *f, const char *s);
/* `.locals [init] (T V_0, ...)` */
void mdi_il_put_locals(struct il *c, FILE *f, void *mem, const mdt_il_body *b);
/* Labelled instructions with the exception blocks; *err set to the first
 * damage. MDT_ENOMEM or 0. */
int mdi_il_text_body(struct il *c, FILE *f, void *mem, const mdt_il_body *b, char **err);
/* `il -a --ilasm`: every open module as ILAsm source (ilasm_module.c). */
int mdi_il_modules_ilasm(struct il *c);

#endif
