/* mdinspect: the command table and the command-line language.
 *
 * One table lists every command with its argument kinds, one-line and long
 * help, and handler. Everything else is derived from it: parsing and
 * unique-prefix matching, usage lines, `help`, --help, the COMMANDS section
 * of mdinspect(1) (--man-commands), and completion in the interactive
 * shell, which completes each argument by its kind. There is no second list
 * of commands or help text.
 *
 * Adding a command is a one-file change: write mdinspect/cmd_NAME.c
 * defining `const mdi_cmd mdi_cmd_NAME = {...}` (name, arguments, help,
 * handler), add the line MDI_CMD(NAME) to mdinspect/commands.def and the
 * file to mdinspect/local.mk. The table is sorted by name at first use.
 *
 * Language: commands are separated by ';'. Words are separated by blanks;
 * '...' quotes literally, "..." quotes with \" and \\ escapes, and a
 * backslash outside quotes takes the next character literally. A command
 * name may be abbreviated to any unique prefix. */
#ifndef MDINSPECT_CMD_H
#define MDINSPECT_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mdtools/tables.h>

#include "state.h"

/* What a handler returns. */
enum mdi_result {
    MDI_OK = 0,   /* done */
    MDI_FAIL = 1, /* failed or partly failed; the reason went to st->err */
    MDI_QUIT = 2  /* leave the session */
};

/* Argument kinds: how an argument is checked and completed. Kinds marked
 * "at parse" are checked before any command of a line runs (a bad one is a
 * usage error); the others depend on what is open and are checked by the
 * handler when it runs. */
enum mdi_argkind {
    MDI_ARG_WORD,         /* any word; no completion */
    MDI_ARG_TABLE,        /* at parse: table name (any case, unique prefix) or id (0x02) */
    MDI_ARG_ROW,          /* at parse: row number, decimal or 0x hex, 1..0xFFFFFF */
    MDI_ARG_NUMBER,       /* at parse: unsigned 32-bit number, decimal or 0x hex */
    MDI_ARG_COMMAND,      /* at parse: command name (unique prefix) */
    MDI_ARG_CHOICE,       /* at parse: one of spec->choices (unique prefix) */
    MDI_ARG_COLUMN_VALUE, /* at parse: COL=VALUE, COL a column of the TABLE argument */
    MDI_ARG_FLAG,         /* at parse: the option word spec->name ("-a"), anywhere */
    MDI_ARG_PATH,         /* file, directory or glob; completes file names */
    MDI_ARG_MODULE,       /* an open module: #N, module name or path */
    MDI_ARG_TYPE,         /* type of the current module: Ns.Name+Nested, or a token */
    MDI_ARG_MEMBER,       /* a type or Type::member of the current module, or a token */
    MDI_ARG_TOKEN,        /* any token 0xTTRRRRRR of the current module, or a name */
    MDI_ARG_PATTERN,      /* glob over type and member names */
    MDI_ARG_CUSTOM        /* checked by the handler, completed by spec->complete */
};

enum {
    MDI_ARGF_OPTIONAL = 1u << 0, /* may be left out (and so may the positional ones after it) */
    MDI_ARGF_REPEAT = 1u << 1    /* last positional argument only: may be given many times */
};

/* Completion candidates, for spec->complete. */
typedef struct mdi_cands mdi_cands;
/* Offer `s` (copied) if `text` is a prefix of it. A candidate ending in
 * '.', '+', ':', '=' or '/' is a step, not a whole word: no blank follows. */
void mdi_cand_add(mdi_cands *c, const char *text, const char *s);
/* words[0..nwords) are the words before the one being completed, the
 * command name first. */
typedef void (*mdi_completer)(mdi_state *st, mdi_cands *c, const char *text, char **words,
                              size_t nwords);

typedef struct mdi_argspec {
    const char *name; /* as usage shows it ("TABLE"; "-a" for a flag); NULL ends the list */
    uint8_t kind;     /* enum mdi_argkind */
    uint8_t flags;
    const char *keyword;        /* introduced by this literal word ("where"), or NULL */
    const char *const *choices; /* MDI_ARG_CHOICE: NULL-terminated words */
    mdi_completer complete;     /* MDI_ARG_CUSTOM, or to replace the kind's completion */
    const char *about;          /* flags: what the flag does, for help */
    const char *alias;          /* flags: another spelling ("--all" for "-a"), or NULL */
} mdi_argspec;

/* The spellings every command uses for its flag meaning "all modules". */
#define MDI_FLAG_ALL(what)                                                                         \
    {                                                                                              \
        .name = "-a", .alias = "--all", .kind = MDI_ARG_FLAG, .about = (what)                      \
    }

/* A checked argument, as given (keywords left out). */
typedef struct mdi_arg {
    const char *text; /* as typed (unquoted) */
    uint32_t value;   /* table id, row, number, choice or command index; 1 for a flag */
    uint8_t spec;     /* index in cmd->args */
} mdi_arg;

enum {
    MDI_CMD_IMAGE = 1u << 0 /* needs a current module */
};

#define MDI_MAX_ARGS 6

typedef int (*mdi_handler)(mdi_state *st, size_t argc, const mdi_arg *argv);

typedef struct mdi_cmd {
    const char *name;
    mdi_argspec args[MDI_MAX_ARGS + 1];
    unsigned flags;
    const char *summary; /* one line, no final period */
    const char *help;    /* paragraphs separated by an empty line, lines end
                            with '\n'; lines indented by two blanks are shown
                            as they are (tables, examples) */
    mdi_handler run;
} mdi_cmd;

/* The commands, declared from commands.def. */
#define MDI_CMD(name) extern const mdi_cmd mdi_cmd_##name;
#include "commands.def"
#undef MDI_CMD

/* The table, sorted by name. */
size_t mdi_cmd_count(void);
const mdi_cmd *mdi_cmd_at(size_t i);
/* The command named exactly `name`, or NULL. */
const mdi_cmd *mdi_cmd_get(const char *name);
/* The commands in table order (mdi_cmd_count of them). */
const mdi_cmd *const *mdi_cmd_table(void);
/* Command names in table order (for mdi_match). */
const char *const *mdi_cmd_names(void);

/* The argument given for spec `spec` (the first one, for a repeated
 * argument), or NULL (help.c, below the commands). */
const mdi_arg *mdi_arg_of(size_t argc, const mdi_arg *argv, unsigned spec);

/* One parsed command, ready to run. */
typedef struct mdi_call {
    const mdi_cmd *cmd;
    size_t argc;
    mdi_arg *argv;
} mdi_call;

/* Parse a line of ';'-separated commands into *calls (a talloc array under
 * mem_ctx; empty commands are dropped). Names are matched, arguments bound
 * to their specs and checked by kind; nothing runs. On error returns -1 and
 * sets *err to a message under mem_ctx. */
int mdi_parse(void *mem_ctx, mdi_call **calls, size_t *ncalls, char **err, const char *line);

/* Run one call against the state: checks that a module is open if the
 * command needs one, and turns an interruption (Ctrl-C) into a failure
 * with a message. Returns an enum mdi_result. */
int mdi_run(mdi_state *st, const mdi_call *call);

/* Split text into words as the parser does, for completion: stops at the
 * last ';' outside quotes. *open_word is set when the text ends inside a
 * word (the last word is then the one being typed). Words go under mem. */
int mdi_split_words(void *mem, const char *text, char ***words, size_t *nwords, bool *open_word);
/* The spec the argument after words[1..nwords) binds to (words[0] is the
 * command), as the parser would bind it, or NULL. */
const mdi_argspec *mdi_spec_at(const mdi_cmd *cmd, char **words, size_t nwords);

/* Unique-prefix matching, shared by commands, table names, choices and
 * completion: an exact match wins (case-insensitively when nocase), else the
 * only name `word` is a prefix of. NULL names are skipped. */
enum { MDI_MATCH_NONE = -1, MDI_MATCH_AMBIGUOUS = -2 };
long mdi_match(const char *word, const char *const *names, size_t n, bool nocase);
/* The names `word` is a prefix of, ", "-separated, under mem_ctx. */
char *mdi_match_list(void *mem_ctx, const char *word, const char *const *names, size_t n,
                     bool nocase);
/* " (did you mean 'types'?)" naming the entries of names[0..n) closest to
 * word, within one or two edits (case ignored), or "" when none is that
 * close; under mem_ctx. */
char *mdi_did_you_mean(void *mem_ctx, const char *word, const char *const *names, size_t n);
/* A number as a word: decimal, or hex after 0x; the whole word; at most
 * `max` (the parser's arguments, dump's `where` values). */
bool mdi_parse_number(const char *s, uint32_t max, uint32_t *out);
/* Table names indexed by id (NULL where no table), MDT_TABLE_MAX of them. */
const char *const *mdi_table_names(void);

/* "dump TABLE [FROM [TO]] [where COL=VALUE]", under mem_ctx. */
char *mdi_usage(void *mem_ctx, const mdi_cmd *cmd);

/* Help for `help [COMMAND]`, --help and --man-commands (help.c), from a
 * table of n commands in name order (mdi_cmd_table, or st->commands). */
void mdi_help_list(mdi_printer *p, const mdi_cmd *const *cmds, size_t n);
void mdi_help_one(mdi_printer *p, const mdi_cmd *cmd);
/* The COMMANDS section of mdinspect(1), in roff, to `out`. */
void mdi_help_roff(FILE *out, const mdi_cmd *const *cmds, size_t n);

/* Parts shared between commands (parts.c, rows.c). `key`/`label` name the
 * list (nested in a record) or are NULL/"" at top level. */
void mdi_print_streams(mdi_state *st, const mdt_image *img, const char *key, const char *label);
void mdi_print_tables(mdi_state *st, const mdt_image *img, const char *key, const char *label,
                      bool row_sizes);
/* One decoded cell of a row, as `dump` shows it; 0, or -1 when it could not
 * be decoded (then an error value was printed). */
int mdi_print_cell(mdi_printer *p, const mdt_row *row, unsigned col);
/* A listing walks the rows of a table that lie inside the tables stream
 * (mdt_table_rows_present), not all the rows it declares: a damaged image
 * may declare 0xFFFFFF rows in a few bytes, and a line (or an allocation)
 * for each would be output unbounded by the input. This says once, as an
 * item of the list being printed, that the rest are missing (with the
 * library's located error for the first); it returns how many are, 0
 * printing nothing when none is. */
uint32_t mdi_rows_missing(mdi_state *st, const mdt_image *img, unsigned table);

/* The machine field of a COFF header: JSON "machine" and "machine_name",
 * text "0x8664 (AMD64)". */
void mdi_print_machine(mdi_printer *p, uint16_t machine);
/* The name of a debug directory entry type ("CodeView"), or NULL. */
const char *mdi_debug_type_name(uint32_t type);

/* The name of a strong-name hash algorithm id ("SHA-256"), or NULL. */
const char *mdi_sn_alg_name(uint32_t alg);
/* The outcome of the strong-name check (parts.c): JSON `key` an object
 * {status, reason}, text one line under `label`; 1 when the check failed
 * (an error value was printed), else 0. */
int mdi_print_strongname(mdi_state *st, const mdt_image *img, const char *key, const char *label);

/* The name styles by name, in `set style`'s order (names.c). */
extern const char *const mdi_style_names[];
/* `set style VALUE` (a unique prefix of full, reflection, il, friendly):
 * 0, or -1 when VALUE names no style (names.c: main's --style sets it too). */
int mdi_set_style(mdi_state *st, const char *value);

/* Flag names (flags.c), for mdi_flags(). */
extern const mdi_flagname mdi_type_flags[], mdi_method_flags[], mdi_field_flags[],
    mdi_gparam_flags[], mdi_assembly_flags[], mdi_property_flags[], mdi_event_flags[];
/* The names that apply to v, lower case, blank-separated ("public static"):
 * the ILAsm keywords, for text columns. Under mem. */
char *mdi_flag_words(void *mem, uint32_t v, const mdi_flagname *names);

/* Names in the session's style (`set style`, names.c). */
/* The name of what a token denotes, under mem; NULL when it cannot be
 * formed (the library's error record says why). */
char *mdi_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token);
/* The same into buf (size bytes), or allocated under mem when longer:
 * for loops that print many names. NULL on error (error record set). */
const char *mdi_name_buf(const mdi_state *st, void *mem, char *buf, size_t size,
                         const mdt_image *img, uint32_t token);
/* The same, where !0 stands for a generic parameter of type_owner: named
 * in every style (`T`; `!T` in IL), as a declaration names it. */
char *mdi_name_in(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token,
                  uint32_t type_owner);
/* A name for any row: the formal name where there is one, else the
 * assembly identity or the Name column; "" for a row without a name
 * (CustomAttribute, ...). NULL on error. */
char *mdi_row_name(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token);
/* JSON only: `key` (default "metadata_name") with the name of a type or
 * member token as stored, arity suffixes kept (doc/names.md); nothing for
 * tokens of other tables, or in text. */
void mdi_metadata_name(mdi_state *st, const char *key, const mdt_image *img, uint32_t token);
/* Print that name as a value, or an error value, and its metadata_name;
 * 0, or -1 after an error. */
int mdi_print_name(mdi_state *st, const char *key, const char *label, const mdt_image *img,
                   uint32_t token);
/* The signature of a row that has one (MethodDef, Field, Property,
 * MemberRef, StandAloneSig, TypeSpec, MethodSpec), decoded and named; in
 * the friendly style generic parameters are named from their owners.
 * NULL when it cannot be decoded (error record set). */
char *mdi_sig_text(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token);
/* A type's or member's declaration (decl.c): TypeDef `Ns.Name<T,out U>
 * where T : class`, MethodDef `RET Name<T>(P1 a, P2 b = 1) where T :
 * new()` (generic parameters and constraints as mdt_generic_decl writes
 * them: ILAsm's `Name<class T>` in the IL style), Field `TYPE Name` (with
 * ` = VALUE` when it has one), Property `TYPE Name[P1, P2]`, Event `TYPE
 * Name`; types in the session's style with generic parameters by name.
 * Under mem; NULL when it cannot be formed (the library's error record
 * says why) or the token is no type or member. */
char *mdi_declaration(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token);
/* The signature of a MemberRef on a generic instance, or of the method a
 * MethodSpec instantiates, with the instance's and the MethodSpec's type
 * arguments substituted for !N and !!N (what stays open named from its
 * owner): `instance System.Void(System.Int32)`. Other tokens as
 * mdi_sig_text. NULL when it cannot be formed (error record set). */
char *mdi_inst_sig_text(const mdi_state *st, void *mem, const mdt_image *img, uint32_t token);
/* The same into buf (size bytes) when it fits, else allocated under mem
 * (free it when the result is not buf). */
const char *mdi_sig_buf(const mdi_state *st, void *mem, char *buf, size_t size,
                        const mdt_image *img, uint32_t token);

#endif
