/* Webcil images: placeholder until the Webcil reader lands. */
#include "config.h"

#include "image/image_int.h"

int mdt__webcil_parse(struct mdt_image *img)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.img = img;
    return mdt__fail(MDT_EUNSUPPORTED, pl, "Webcil is not read yet");
}
