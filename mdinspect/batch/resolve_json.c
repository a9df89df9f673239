/* mdinspect batch, the resolver (resolve_int.h): a frame's JSON members
 * (name, metadata name, status, detail, assembly, module, MVID, token,
 * file and line, the IL instruction), made with the frame in a JSON run
 * and kept with it. */
#include "config.h"

#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/members.h>

#include "batch/resolve_int.h"
#include "common/hex.h"

static void member_str(mdb_output *o, const char *key, const char *v, size_t n)
{
    mdb_outc(o, '"');
    mdb_outs(o, key);
    mdb_outs(o, "\":");
    mdb_out_json_string(o, v, n);
}

/* The JSON members of a frame, in the scratch buffer. */
void mdb_res_json_form(mdb_resolver *r, const mdb_frame *f)
{
    mdb_output *o = &r->scratch;
    char tok[11];
    o->len = 0;
    o->failed = false;
    if (f->status == MDB_SPECIAL) {
        const char *colon = memchr(f->name, ':', f->name_len);
        size_t k = colon ? (size_t)(colon - f->name) : f->name_len;
        member_str(o, "status", f->name, k);
        if (colon) {
            mdb_outc(o, ',');
            member_str(o, "reason", colon + 1, f->name_len - k - 1);
        }
    } else {
        if (f->status == MDB_OK) {
            member_str(o, "name", f->name, f->name_len);
            mdb_outc(o, ',');
            if (f->meta == mdb_no_meta) {
                mdb_outs(o, "\"metadata_name\":null,");
            } else if (f->meta) {
                member_str(o, "metadata_name", f->meta, strlen(f->meta));
                mdb_outc(o, ',');
            }
        }
        member_str(o, "status", mdb_status_text(f->status), strlen(mdb_status_text(f->status)));
        if (f->status != MDB_OK && f->detail) {
            mdb_outc(o, ',');
            member_str(o, "detail", f->detail, strlen(f->detail));
        }
        if (f->status == MDB_UNKNOWN_MVID && f->unknown_mvid) {
            char mv[33];
            mdb_format_mvid(mv, f->unknown_mvid);
            mdb_outc(o, ',');
            member_str(o, "unknown_mvid", mv, 32);
        }
        if (f->mod) {
            char mv[33];
            mdb_outc(o, ',');
            member_str(o, "assembly", f->mod->assembly, strlen(f->mod->assembly));
            mdb_outc(o, ',');
            member_str(o, "module", f->mod->name, strlen(f->mod->name));
            if (f->mod->have_mvid) {
                mdb_format_mvid(mv, f->mod->mvid);
                mdb_outc(o, ',');
                member_str(o, "mvid", mv, 32);
            }
        }
        if (f->token) {
            mdi_hex_token(tok, f->token); /* not snprintf: once per frame, it showed */
            mdb_outc(o, ',');
            member_str(o, "token", tok, 10);
        }
        if (f->file) {
            mdb_outc(o, ',');
            member_str(o, "file", f->file, strlen(f->file));
            mdb_outs(o, ",\"line\":");
            mdb_outu(o, f->line);
            mdb_outs(o, ",\"column\":");
            mdb_outu(o, f->column);
        }
        if (r->want_il && f->has_il && f->status == MDB_OK) {
            mdb_outc(o, ',');
            if (r->insn_len)
                member_str(o, "il", r->insn, r->insn_len);
            else
                mdb_outs(o, "\"il\":null");
        }
    }
    if (o->failed) { /* a name too long for the scratch buffer */
        o->len = 0;
        o->failed = false;
        member_str(o, "status", "bad metadata", 12);
    }
}

void mdb_frame_json(mdb_resolver *r, const mdb_frame *f, const char **json, uint32_t *len)
{
    if (f->json) {
        *json = f->json;
        *len = f->json_len;
        return;
    }
    /* A frame made before the run wanted JSON (never, in mdinspect), or
     * the frame that says "out of memory": made again each time. */
    r->insn_len = 0;
    mdb_res_json_form(r, f);
    *json = r->scratch.buf;
    *len = (uint32_t)r->scratch.len;
}
