void r_4_16(void* const* bufs, const int* vars, int core_id, int num_cores) {
  float* restrict data0 = (float*)bufs[0];
  float* restrict data1 = (float*)bufs[1];
  float acc0[1];
  for (int ridx0 = 0; ridx0 < 4; ridx0++) {
    acc0[0] = 0.0f;
    for (int ridx1001 = 0; ridx1001 < 16; ridx1001++) {
      float val0 = *(data1+((ridx0*16)+ridx1001));
      acc0[0] = (acc0[0]+val0);
    }
    *(data0+ridx0) = acc0[0];
  }
}
