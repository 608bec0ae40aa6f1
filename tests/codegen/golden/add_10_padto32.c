void E_10(void* const* bufs, const int* vars, int core_id, int num_cores) {
  float* restrict data0 = (float*)bufs[0];
  float* restrict data1 = (float*)bufs[1];
  float* restrict data2 = (float*)bufs[2];
  for (int ridx0 = 0; ridx0 < 32; ridx0++) {
    _Bool alu0 = (ridx0<10);
    float val0 = *(data1+(alu0?ridx0:0));
    float val1 = (alu0?val0:0.0f);
    float val2 = *(data2+(alu0?ridx0:0));
    float val3 = (alu0?val2:0.0f);
    if (alu0) { *(data0+ridx0) = (val1+val3); }
  }
}
