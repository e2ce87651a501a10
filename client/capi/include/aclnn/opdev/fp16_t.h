/* vnpu: op::fp16_t, the IEEE half-precision value type of CANN's opbase (`aclnn/opdev/fp16_t.h`), as example programs
 * use it: made from a float, double or integer (rounded to nearest, ties to even), read back as a float, and stored
 * as its 16 bits (so a std::vector<op::fp16_t> is the host side of an ACL_FLOAT16 tensor). Written for vnpu; C++. */
#ifndef VNPU_ACLNN_OPDEV_FP16_T_H_
#define VNPU_ACLNN_OPDEV_FP16_T_H_

#ifdef __cplusplus
#include <cstdint>
#include <cstring>

namespace op {

struct fp16_t {
    uint16_t val = 0;

    fp16_t() = default;
    fp16_t(float value) : val(FromFloat(value)) {}  // NOLINT: implicit, as opbase's
    fp16_t(double value) : val(FromFloat(static_cast<float>(value))) {}
    fp16_t(int value) : val(FromFloat(static_cast<float>(value))) {}
    fp16_t(int64_t value) : val(FromFloat(static_cast<float>(value))) {}

    operator float() const { return ToFloat(val); }
    float toFloat() const { return ToFloat(val); }

    fp16_t &operator=(float value) { val = FromFloat(value); return *this; }
    fp16_t operator+(fp16_t other) const { return fp16_t(ToFloat(val) + ToFloat(other.val)); }
    fp16_t operator-(fp16_t other) const { return fp16_t(ToFloat(val) - ToFloat(other.val)); }
    fp16_t operator*(fp16_t other) const { return fp16_t(ToFloat(val) * ToFloat(other.val)); }
    fp16_t operator/(fp16_t other) const { return fp16_t(ToFloat(val) / ToFloat(other.val)); }
    bool operator==(fp16_t other) const { return ToFloat(val) == ToFloat(other.val); }
    bool operator!=(fp16_t other) const { return !(*this == other); }
    bool operator<(fp16_t other) const { return ToFloat(val) < ToFloat(other.val); }
    bool operator>(fp16_t other) const { return ToFloat(val) > ToFloat(other.val); }

    static uint16_t FromFloat(float value)
    {
        uint32_t bits;
        std::memcpy(&bits, &value, sizeof(bits));
        uint32_t sign = (bits >> 16) & 0x8000u;
        uint32_t exponent = (bits >> 23) & 0xFFu;
        uint32_t mantissa = bits & 0x7FFFFFu;
        if (exponent == 0xFFu) {  // inf, nan (kept quiet)
            return static_cast<uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u | (mantissa >> 13) : 0u));
        }
        int32_t e = static_cast<int32_t>(exponent) - 127 + 15;
        if (e >= 31) {
            return static_cast<uint16_t>(sign | 0x7C00u);  // overflow: inf
        }
        if (e <= 0) {  // a subnormal half, or zero
            if (e < -10) {
                return static_cast<uint16_t>(sign);
            }
            mantissa |= 0x800000u;
            uint32_t shift = static_cast<uint32_t>(14 - e);
            uint32_t half = mantissa >> shift;
            uint32_t rest = mantissa & ((1u << shift) - 1u);
            uint32_t middle = 1u << (shift - 1);
            if (rest > middle || (rest == middle && (half & 1u))) {
                half++;
            }
            return static_cast<uint16_t>(sign | half);
        }
        uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
        uint32_t rest = mantissa & 0x1FFFu;
        if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) {
            half++;  // may carry into the exponent, up to inf: as it should
        }
        return static_cast<uint16_t>(sign | half);
    }

    static float ToFloat(uint16_t half)
    {
        uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
        uint32_t exponent = (half >> 10) & 0x1Fu;
        uint32_t mantissa = half & 0x3FFu;
        uint32_t bits;
        if (exponent == 0x1Fu) {
            bits = sign | 0x7F800000u | (mantissa << 13);
        } else if (exponent != 0) {
            bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
        } else if (mantissa == 0) {
            bits = sign;
        } else {  // subnormal: normalize
            int32_t e = 113;
            while ((mantissa & 0x400u) == 0) {
                mantissa <<= 1;
                e--;
            }
            bits = sign | (static_cast<uint32_t>(e) << 23) | ((mantissa & 0x3FFu) << 13);
        }
        float value;
        std::memcpy(&value, &bits, sizeof(value));
        return value;
    }
};

}  // namespace op
#endif

#endif /* VNPU_ACLNN_OPDEV_FP16_T_H_ */
